// CPU time of process groups over a window, from /proc (Linux): user + system of every thread, plus the CPU of the
// children each process has reaped (cutime + cstime: a Postgres backend that exited counts in the postmaster's, a
// git child in its worker's). A group is a list of pids or every process whose comm is one of some names (and that
// passes a test of its pid, if given). Also the machine's busy time, to see what else ran meanwhile.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds of `pid` and its reaped children so far, or undefined if it is gone. */
export function procCpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** Every pid whose comm (the executable's name, which Postgres backends keep) is one of `names`. */
export function pidsNamed(names) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The database a Postgres backend serves, from its title (`postgres: [cluster: ]user db host(port) state`); else undefined. */
export function backendDatabase(pid) {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return /^postgres: (?:\S+: )?\S+ (\S+) (?:\S+\(\d+\)|\[local\])/.exec(title)?.[1];
  } catch {
    return undefined;
  }
}

/** Seconds the machine's cores have been busy (every state of /proc/stat's cpu line but idle and iowait). */
export function machineBusySeconds() {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) / CLK_TCK;
}

/**
 * `groups`: name → pids, or name → { names, where? } (found afresh at each snapshot, `where(pid)` filtering them).
 * Returns name → Map(pid → seconds).
 */
export function cpuSnapshot(groups) {
  const snap = {};
  for (const [group, spec] of Object.entries(groups)) {
    const pids = Array.isArray(spec) ? spec : pidsNamed(spec.names).filter(spec.where ?? (() => true));
    snap[group] = new Map(pids.map((pid) => [pid, procCpuSeconds(pid)]).filter(([, s]) => s !== undefined));
  }
  return snap;
}

/**
 * CPU seconds per group between two snapshots: each process alive at the end counts what it used since the first
 * (all of it if it started in between); a process that ended in between counts in its parent's reaped time.
 */
export function cpuDelta(before, after) {
  const out = {};
  for (const [group, pids] of Object.entries(after)) {
    let s = 0;
    for (const [pid, sec] of pids) s += sec - (before[group]?.get(pid) ?? 0);
    out[group] = s;
  }
  return out;
}
