import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from './process-runner';

const spec = (command: string, over: Partial<Parameters<typeof runProcess>[0]> = {}) => ({
  argv: ['/bin/sh', '-c', command],
  cwd: tmpdir(),
  env: { PATH: '/usr/bin:/bin', HOME: tmpdir() },
  timeoutMs: 10_000,
  maxOutputBytes: 1024 * 1024,
  signal: new AbortController().signal,
  ...over,
});

describe('runProcess', () => {
  it('captures stdout, stderr and the exit code with only the given environment', async () => {
    const r = await runProcess(spec('echo out; echo err >&2; echo "secret=${SECRET:-unset}"; exit 3', { env: { PATH: '/usr/bin:/bin' } }));
    expect(r.stdout.toString()).toBe('out\nsecret=unset\n');
    expect(r.stderr.toString()).toBe('err\n');
    expect(r.exitCode).toBe(3);
  });

  it('kills the whole process group on timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-pr-'));
    const pidFile = join(dir, 'child.pid');
    const r = await runProcess(spec(`sleep 30 & echo $! > ${pidFile}; sleep 30`, { timeoutMs: 500 }));
    expect(r.timedOut).toBe(true);
    // The background child belongs to the same group: it must be gone too (signal 0 probes existence).
    const childPid = Number(readFileSync(pidFile, 'utf8').trim());
    const alive = () => {
      try {
        process.kill(childPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 250 && alive(); i++) await new Promise((res) => setTimeout(res, 20));
    expect(alive()).toBe(false);
  });

  it('stops a command whose output exceeds the cap and marks it truncated', async () => {
    const r = await runProcess(spec('yes hecate', { maxOutputBytes: 4096 }));
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBe(4096);
  });

  it('kills the group when the signal aborts (cancel)', async () => {
    const controller = new AbortController();
    const dir = mkdtempSync(join(tmpdir(), 'hecate-pr-'));
    const pending = runProcess(spec(`echo started > ${join(dir, 'started')}; sleep 30`, { signal: controller.signal }));
    for (let i = 0; i < 100 && !existsSync(join(dir, 'started')); i++) await new Promise((res) => setTimeout(res, 20));
    controller.abort();
    const r = await pending;
    expect(r.cancelled).toBe(true);
    expect(readFileSync(join(dir, 'started'), 'utf8')).toBe('started\n');
  });
});
