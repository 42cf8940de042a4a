import { spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes } from '../tasks/tasks-harness';

/**
 * The file tools against what runs beside them (docs/security.md): a process in the workspace swaps a directory for a symlink
 * to a root-only host directory or to the server's data directory thousands of times while read_file, list_dir, grep,
 * file_write, file_edit and file tasks go through it; nothing outside the workspace is ever read or created. Huge
 * files are read only up to the cap (the server's peak RSS does not follow the file size); an in_place task at `/`
 * records its patch relative to `/` and reverts.
 */

const SECRET = 'HOST-SECRET-7f3c1d0e9b';

/** A real process that swaps `<dir>` for a symlink to `<target>` and back until `stop` exists; prints its swap count. */
const SWAPPER = `
const fs = require('fs');
const [stop, ...pairs] = process.argv.slice(2);
const swaps = pairs.map((p) => p.split('='));
let n = 0;
for (;;) {
  for (const [d, target] of swaps) {
    const real = d + '.real';
    if (fs.existsSync(real)) { try { fs.rmSync(d, { recursive: true, force: true }); } catch {} }
    else { try { fs.renameSync(d, real); } catch {} }
    try { fs.symlinkSync(target, d); } catch {}
    for (let i = 0; i < 200; i++) fs.existsSync(d);
    try { fs.unlinkSync(d); } catch {}
    try { fs.renameSync(real, d); } catch {}
  }
  n++;
  if (n % 200 === 0 && fs.existsSync(stop)) break;
}
process.stdout.write(String(n));
`;

/** Every file below `dir` (names relative to it). */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** The names and contents of the regular files below `dir`, never following a symlink (a copied link stays a link). */
function copiedContents(dir: string): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) => (e.isDirectory() ? copiedContents(join(dir, e.name)) : e.isFile() ? `${e.name}: ${readFileSync(join(dir, e.name), 'utf8')}` : ''))
    .join('\n');
}

const peakRssKb = (pid: number): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

describe('file tools against symlink races, huge files and a root workspace', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let c: Client;
  const base = mkdtempSync(join(tmpdir(), 'hecate-ftools-'));
  const dataDir = join(base, 'data');
  const hostSecret = join(base, 'root-only');
  const proj = join(base, 'proj');
  const roots = join(base, 'roots');

  const call = (name: string, args: Record<string, unknown>, id: string) => ({ name, arguments: args, id });
  /** The tool results the model read, in order (from the last model request's conversation). */
  const toolResults = (): string[] => {
    const last = upstream.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
    return ((last?.body as Json)?.messages as Json[]).filter((m) => m.role === 'tool').map((m) => String(m.content));
  };
  const runAgent = async (dto: Json, timeoutMs = 120_000) => {
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'go', ...dto });
    return { taskId, runId, run: await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], timeoutMs) };
  };

  beforeAll(async () => {
    mkdirSync(hostSecret, { mode: 0o700 });
    writeFileSync(join(hostSecret, 'f'), `${SECRET}\n`, { mode: 0o600 });
    writeFileSync(join(hostSecret, 'only-on-host.txt'), `${SECRET}\n`, { mode: 0o600 });
    chmodSync(hostSecret, 0o700);
    mkdirSync(join(proj, 'r'), { recursive: true });
    mkdirSync(roots);
    mkdirSync(join(proj, 'w'));
    writeFileSync(join(proj, 'r', 'f'), 'workspace text\n');
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    server = await procs.start(
      'all',
      embeddedTasksEnv({
        ...providerEnv('fake', upstream, { kind: 'local' }),
        GATEWAY_DATA_DIR: dataDir,
        GATEWAY_TASK_APPROVAL_POLICIES: 'none',
        GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: '40',
        GATEWAY_WORKSPACE_ROOTS: roots,
      }),
    );
    c = new Client(server.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
    rmSync(base, { recursive: true, force: true });
  });
  beforeEach(() => upstream.reset());

  it('a process swapping workspace directories for symlinks never makes a file tool read or write outside the workspace', async () => {
    const stop = join(base, 'stop-swapping');
    const script = join(base, 'swapper.js');
    writeFileSync(script, SWAPPER);
    const dataBefore = filesBelow(dataDir);
    const swapper = spawn(process.execPath, [script, stop, `${join(proj, 'r')}=${hostSecret}`, `${join(proj, 'w')}=${dataDir}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let swaps = '';
    swapper.stdout.on('data', (d: Buffer) => (swaps += d.toString()));
    try {
      // 30 turns of 16 calls: reads, listings, greps and writes through the swapped directories, then an answer.
      const turns = 30;
      for (let t = 0; t < turns; t++) {
        const calls = [];
        for (let i = 0; i < 4; i++) {
          const id = `${t}_${i}`;
          calls.push(call('read_file', { path: 'r/f' }, `c_read_${id}`));
          calls.push(call('file_write', { path: `w/agent-${id}.txt`, content: 'x' }, `c_write_${id}`));
          calls.push(call(i % 2 ? 'list_dir' : 'grep', i % 2 ? { path: 'r' } : { pattern: 'SECRET|text', path: 'r' }, `c_scan_${id}`));
          calls.push(call('file_edit', { path: 'r/f', old_string: 'workspace', new_string: 'workspace' }, `c_edit_${id}`));
        }
        upstream.script({ toolCalls: calls });
      }
      upstream.script({ content: 'done' });
      const { run } = await runAgent({ workspace_mode: 'in_place', working_directory: proj }, 300_000);
      expect(run.status).toBe('completed');
      const results = toolResults();
      expect(results).toHaveLength(turns * 16);
      expect(results.filter((r) => r.includes(SECRET) || r.includes('only-on-host'))).toEqual([]);
      // The race was really run: some calls went through the real directories, some met the swap and were refused.
      expect(results.filter((r) => r === 'workspace text\n').length).toBeGreaterThan(0);

      // File tasks (the worker's file runner) and a patch revert through the same swapped directory.
      let refusedAtCreate = 0;
      for (let i = 0; i < 20; i++) {
        const dto = { execution_kind: 'file', file_path: `w/task-${i}.txt`, file_content: 'x', workspace_mode: 'in_place', working_directory: proj };
        const created = await c.call('POST', '/hecate/v1/tasks', dto);
        if (created.status === 400) {
          refusedAtCreate += 1; // the create-time check met the symlink
          continue;
        }
        const taskId = (created.body as Json).data.id as string;
        const runId = ((await c.ok('POST', `/hecate/v1/tasks/${taskId}/start`)) as Json).id as string;
        const done = await c.waitStatus(taskId, runId, ['completed', 'failed']);
        if (done.status === 'completed') {
          const [patch] = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/patches`)) as unknown as Json[];
          await c.call('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/patches/${patch.artifact.id}/revert`);
        } else expect(done.error_kind).toMatch(/invalid_path|file_error/);
      }
      expect(refusedAtCreate).toBeLessThan(20);
    } finally {
      writeFileSync(stop, '');
      await once(swapper, 'exit');
    }
    expect(Number(swaps)).toBeGreaterThan(1000);
    // Nothing was created in the data directory or the root-only directory, and the host file is untouched.
    expect(filesBelow(dataDir).filter((f) => !dataBefore.includes(f) && /(agent|task)-/.test(f))).toEqual([]);
    expect(readdirSync(hostSecret).sort()).toEqual(['f', 'only-on-host.txt']);
    expect(readFileSync(join(hostSecret, 'f'), 'utf8')).toBe(`${SECRET}\n`);
  }, 400_000);

  it('read_file and grep read a 600 MB file only up to their caps: the peak RSS of the server does not follow the file size', async () => {
    const big = mkdtempSync(join(tmpdir(), 'hecate-big-'));
    try {
      // 2 MB of text lines, then a 600 MB hole (a sparse file: no disk used), then a last text line.
      const file = join(big, 'big.log');
      const fd = openSync(file, 'w');
      const lines = Array.from({ length: 40_000 }, (_, i) => `line ${i} of the log, padded to about fifty bytes\n`).join('');
      writeSync(fd, lines);
      writeSync(fd, 'needle at the end\n', 600 * 1024 * 1024);
      closeSync(fd);
      // A real 64 MB text file grepped to its end (the match is on the last line).
      const text = join(big, 'text.log');
      const tfd = openSync(text, 'w');
      const block = Buffer.from(lines);
      for (let written = 0; written < 64 * 1024 * 1024; written += block.length) writeSync(tfd, block);
      writeSync(tfd, 'needle at the end\n');
      closeSync(tfd);
      const before = peakRssKb(server.proc.pid!);
      upstream.script({
        toolCalls: [
          call('read_file', { path: 'big.log' }, 'r1'),
          call('read_file', { path: 'big.log' }, 'r2'),
          call('read_file', { path: 'big.log' }, 'r3'),
          call('grep', { pattern: 'line 3[0-9]{4} ' }, 'g1'),
          call('grep', { pattern: 'needle', path: 'text.log' }, 'g2'),
          call('file_edit', { path: 'big.log', old_string: 'line 1 ', new_string: 'LINE 1 ' }, 'e1'),
        ],
      });
      upstream.script({ content: 'read' });
      const { run } = await runAgent({ workspace_mode: 'in_place', working_directory: big });
      expect(run.status).toBe('completed');
      const [r1, r2, r3, g1, g2, e1] = toolResults();
      for (const r of [r1, r2, r3]) {
        expect(r.startsWith('line 0 of the log')).toBe(true);
        expect(r).toContain(`[truncated: the first ${60 * 1024} of ${600 * 1024 * 1024 + 18} bytes]`);
        expect(Buffer.byteLength(r)).toBeLessThan(61 * 1024);
      }
      expect(g1.split('\n').filter((l) => l.startsWith('big.log:'))).toHaveLength(200);
      expect(g1).toContain('[stopped at 200 results]');
      expect(g2.split('\n').filter((l) => /^text\.log:\d+: needle at the end$/.test(l))).toHaveLength(1);
      expect(e1).toContain('larger than');
      const grown = peakRssKb(server.proc.pid!) - before;
      expect(grown).toBeLessThan(150 * 1024);
    } finally {
      rmSync(big, { recursive: true, force: true });
    }
  }, 180_000);

  it('copying a working_directory under GATEWAY_WORKSPACE_ROOTS while it is being swapped never copies a host file', async () => {
    const src = join(roots, 'src-proj');
    mkdirSync(join(src, 'd'), { recursive: true });
    mkdirSync(join(roots, 'top'));
    writeFileSync(join(src, 'd', 'f'), 'workspace text\n');
    writeFileSync(join(roots, 'top', 'f'), 'workspace text\n');
    const stop = join(base, 'stop-copy-swapping');
    const script = join(base, 'swapper.js');
    writeFileSync(script, SWAPPER);
    const swapper = spawn(process.execPath, [script, stop, `${join(src, 'd')}=${hostSecret}`, `${join(roots, 'top')}=${hostSecret}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let swaps = '';
    swapper.stdout.on('data', (d: Buffer) => (swaps += d.toString()));
    const outputs: string[] = [];
    try {
      for (let i = 0; i < 24; i++) {
        const working_directory = i % 2 ? join(roots, 'top') : src;
        const created = await c.call('POST', '/hecate/v1/tasks', { execution_kind: 'shell', shell_command: 'cat f d/f 2>&1; ls -R', working_directory });
        if (created.status === 400) continue; // the create-time check met the link
        const taskId = (created.body as Json).data.id as string;
        const runId = ((await c.ok('POST', `/hecate/v1/tasks/${taskId}/start`)) as Json).id as string;
        const run = await c.waitStatus(taskId, runId, ['completed', 'failed']);
        const artifacts = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts`)) as unknown as Json[];
        for (const a of artifacts.filter((x) => x.kind === 'stdout'))
          outputs.push(String((await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts/${a.id}`)).content_text));
        outputs.push(String(run.last_error ?? run.error ?? ''));
        if (run.workspace_path && existsSync(run.workspace_path)) outputs.push(copiedContents(run.workspace_path));
      }
    } finally {
      writeFileSync(stop, '');
      await once(swapper, 'exit');
    }
    expect(Number(swaps)).toBeGreaterThan(100);
    expect(outputs.some((o) => o.includes('workspace text'))).toBe(true);
    expect(outputs.filter((o) => o.includes(SECRET) || o.includes('only-on-host'))).toEqual([]);
  }, 300_000);

  it("a workspace AGENTS.md that is a symlink to a host file never reaches the model's prompt", async () => {
    const ws = mkdtempSync(join(tmpdir(), 'hecate-agentsmd-'));
    try {
      symlinkSync(join(hostSecret, 'f'), join(ws, 'AGENTS.md'));
      writeFileSync(join(ws, 'CLAUDE.md'), 'workspace rules\n');
      upstream.script({ content: 'ok' });
      const { run } = await runAgent({ workspace_mode: 'in_place', working_directory: ws });
      expect(run.status).toBe('completed');
      const system = String(((upstream.requests.find((r) => r.path === '/v1/chat/completions')!.body as Json).messages as Json[])[0].content);
      expect(system).not.toContain(SECRET);
      expect(system).toContain('CLAUDE.md from the workspace:\nworkspace rules');
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('an operator in_place task at / records its patch relative to / and reverts it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-rootws-'));
    try {
      const file = join(dir, 'made-at-root.txt');
      const { taskId, runId } = await c.startTask({
        execution_kind: 'file',
        file_path: file,
        file_content: 'at root\n',
        workspace_mode: 'in_place',
        working_directory: '/',
      });
      expect(await c.waitStatus(taskId, runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
      expect(readFileSync(file, 'utf8')).toBe('at root\n');
      const [patch] = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/patches`)) as unknown as Json[];
      expect(patch).toMatchObject({ status: 'applied', path: file.slice(1) });
      const reverted = await c.call('POST', `/hecate/v1/tasks/${taskId}/runs/${runId}/patches/${patch.artifact.id}/revert`);
      expect(reverted.status).toBe(200);
      expect(existsSync(file)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
