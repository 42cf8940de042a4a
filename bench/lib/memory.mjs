// Per-process memory breakdown from /proc (Linux): what the kernel counts (status, smaps_rollup) and where the
// anonymous memory sits (glibc malloc arenas, the brk heap, other anonymous mappings: V8's pages, thread stacks, …).
import { readFileSync } from 'node:fs';

const kbToMb = (kb) => +(kb / 1024).toFixed(1);
/** glibc reserves each non-main malloc arena as one 64 MB-aligned 64 MB mapping (HEAP_MAX_SIZE on 64-bit). */
const ARENA_BYTES = 64 * 2 ** 20;

function fields(text, names) {
  const out = {};
  for (const name of names) {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
    out[name] = m ? Number(m[1]) : NaN;
  }
  return out;
}

/**
 * `/proc/<pid>/status` (RssAnon, RssFile, VmHWM, threads), `/proc/<pid>/smaps_rollup` (Anonymous) and, from
 * `/proc/<pid>/smaps`, the resident size of glibc's malloc arenas (their count too), of the brk heap and of every
 * other anonymous mapping. Sizes in MB; an empty object if the process is gone.
 */
export function procMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const st = fields(status, ['VmRSS', 'VmHWM', 'RssAnon', 'RssFile', 'RssShmem', 'VmData']);
    const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1]);
    const rollup = fields(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), ['Rss', 'Anonymous', 'Pss_Anon', 'Pss_File']);
    const maps = [];
    let cur;
    for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
      if (head) {
        cur = { start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3], path: head[4], rss: 0, anon: 0 };
        maps.push(cur);
      } else if (cur) {
        const m = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
        if (m) cur[m[1] === 'Rss' ? 'rss' : 'anon'] = Number(m[2]);
      }
    }
    let arenas = 0;
    let arenaKb = 0;
    let brkKb = 0;
    let otherAnonKb = 0;
    for (let i = 0; i < maps.length; i++) {
      const m = maps[i];
      if (m.path === '[heap]') {
        brkKb += m.anon;
        continue;
      }
      if (m.path) continue;
      // An arena: a 64 MB-aligned read-write part and its reserved (---p) rest, 64 MB together.
      const next = maps[i + 1];
      const span = next && !next.path && next.start === m.end && next.perms === '---p' ? next.end - m.start : m.end - m.start;
      if (m.perms === 'rw-p' && m.start % BigInt(ARENA_BYTES) === 0n && span === BigInt(ARENA_BYTES)) {
        arenas += 1;
        arenaKb += m.anon;
        continue;
      }
      otherAnonKb += m.anon;
    }
    return {
      rss_anon_mb: kbToMb(st.RssAnon),
      rss_file_mb: kbToMb(st.RssFile),
      rss_shmem_mb: kbToMb(st.RssShmem),
      hwm_mb: kbToMb(st.VmHWM),
      vm_data_mb: kbToMb(st.VmData),
      anonymous_mb: kbToMb(rollup.Anonymous),
      threads,
      malloc_arenas: arenas,
      malloc_arenas_mb: kbToMb(arenaKb),
      brk_heap_mb: kbToMb(brkKb),
      other_anon_mb: kbToMb(otherAnonKb),
    };
  } catch {
    return {};
  }
}
