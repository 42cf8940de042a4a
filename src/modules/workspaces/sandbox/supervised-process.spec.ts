import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { behindLifeline } from './lifeline';
import { describeExit, SupervisedProcess, type SupervisedSpec } from './supervised-process';

const sh = (script: string, over: Partial<SupervisedSpec> = {}): SupervisedProcess =>
  SupervisedProcess.spawn({ argv: ['/bin/sh', '-c', script], cwd: tmpdir(), env: { PATH: '/usr/bin:/bin' }, stdin: 'ignore', graceMs: 300, ...over });

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !check();) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('SupervisedProcess', () => {
  it('behind the lifeline a command keeps its output and status, never sees fd 3, and `exited` follows its exit', async () => {
    const p = SupervisedProcess.spawn({
      argv: behindLifeline(['/bin/sh', '-c', 'test -e /proc/self/fd/3 && echo sees-fd-3; echo out; exit 4'], 'group'),
      cwd: tmpdir(),
      env: { PATH: '/usr/bin:/bin' },
      stdin: 'ignore',
      graceMs: 300,
    });
    let out = '';
    p.child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    expect(await p.exited).toEqual({ code: 4, signal: null });
    expect(out).toBe('out\n');
  });

  it('reports how it ended in the words the MCP transport uses', async () => {
    const p = sh('exit 3');
    await p.started();
    expect(await p.exited).toEqual({ code: 3, signal: null });
    expect(p.exitReason()).toBe('exited with code 3');
    expect(describeExit({ code: null, signal: 'SIGKILL' })).toBe('killed by SIGKILL');
  });

  it('SIGKILLs a child that ignores SIGTERM once the grace is over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-sp-'));
    const p = sh(`trap '' TERM; echo up > ${join(dir, 'up')}; while :; do sleep 0.05; done`, { graceMs: 400 });
    await waitFor(() => existsSync(join(dir, 'up')));
    const started = Date.now();
    await p.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(p.exit?.signal).toBe('SIGKILL');
    expect(p.exitReason()).toBe('killed by SIGKILL');
  });

  it('a child that honours SIGTERM ends at once, without waiting for the grace', async () => {
    const p = sh('sleep 30', { graceMs: 10_000 });
    await p.started();
    const started = Date.now();
    await p.stop();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(p.exitReason()).toBe('killed by SIGTERM');
  });

  it('kills the grandchildren in its group too, and whatever the leader leaves behind when it exits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-sp-'));
    const pidFile = join(dir, 'grandchild');
    const stopped = sh(`sleep 30 & echo $! > ${pidFile}; wait`);
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'));
    const grandchild = Number(readFileSync(pidFile, 'utf8').trim());
    expect(alive(grandchild)).toBe(true);
    await stopped.stop();
    await waitFor(() => !alive(grandchild));

    // The leader exits on its own; a background child that closed its stdio is left in the group and goes too.
    const leftFile = join(dir, 'left');
    const exited = sh(`sleep 30 >/dev/null 2>&1 & echo $! > ${leftFile}; exit 0`);
    await exited.exited;
    const left = Number(readFileSync(leftFile, 'utf8').trim());
    await waitFor(() => !alive(left));
  });

  it('keeps the tail of stderr', async () => {
    const p = sh('printf "%0200d" 0 >&2; echo " the end" >&2; exit 1', { stderrTail: 16 });
    await p.exited;
    expect(p.stderrTail()).toBe('0000000 the end');
    expect(p.exitReason()).toBe('exited with code 1');
  });

  it('a spawn that fails rejects started() and still settles exited', async () => {
    const p = SupervisedProcess.spawn({ argv: ['/nonexistent/hecate-binary'], cwd: tmpdir(), env: {}, stdin: 'ignore', graceMs: 100 });
    await expect(p.started()).rejects.toThrow(/ENOENT/);
    await p.exited;
    await p.stop();
  });
});
