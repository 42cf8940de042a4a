// How often this machine's cores stop running us: one busy loop per core reads the clock back to back and counts
// the gaps. A gap is time the process did not run (the VM's vCPU was descheduled by its host, or the guest
// kernel took the core) — no syscall, no I/O, no timer is involved, so nothing a program does can avoid it. On
// a 2-vCPU VM these pauses set the tail (p99) of any latency measured in single milliseconds.
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';

const LOOP = `
const ns = BigInt(Math.round(Number(process.argv[1]) * 1e9));
const t0 = process.hrtime.bigint();
let last = t0;
const gaps = [];
for (;;) {
  const t = process.hrtime.bigint();
  const g = Number(t - last);
  if (g > 200000) gaps.push(g / 1e6);
  last = t;
  if (t - t0 > ns) break;
}
process.stdout.write(JSON.stringify(gaps));
`;

function loop(seconds) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', LOOP, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`stall probe exited ${code}`))));
  });
}

/**
 * Runs one busy loop per core for `seconds` (all at once, so every core is busy and none idles) and returns,
 * over all cores: pauses longer than 1 ms and 3 ms per core-second, the longest pause, and the share of
 * time paused (gaps > 0.2 ms).
 */
export async function measureCpuStalls(seconds = 5) {
  const n = cpus().length;
  const all = (await Promise.all(Array.from({ length: n }, () => loop(seconds)))).flat();
  const coreSeconds = n * seconds;
  const over = (ms) => all.filter((g) => g > ms).length;
  return {
    cores: n,
    seconds,
    pauses_over_1ms_per_core_s: over(1) / coreSeconds,
    pauses_over_3ms_per_core_s: over(3) / coreSeconds,
    longest_ms: all.length ? Math.max(...all) : 0,
    paused_share: all.reduce((a, b) => a + b, 0) / 1000 / coreSeconds,
  };
}
