import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes } from '../tasks/tasks-harness';

/**
 * Tool work a tenant (or its model) shapes must not become unbounded work on the event loop or a program run
 * (docs/security.md): catastrophic regular expressions in grep end at the scan time limit while /healthz stays fast, and
 * git_exec / git tasks refuse every way of making git run a program (aliases, program-running configuration keys,
 * other config files, external commands), whatever the repository's own configuration already says.
 */

/** Catastrophic patterns against lines of forty `a` and a `!`. */
const REDOS = ['^(a+)+$', '^(a|a)+$', '^(a|aa)+$', '(a*)*b', '^(\\w+\\s?)*$', '(a+)+b', '(.*a){25}'];

/** git command lines that would let git_exec run a program; each must be refused. */
const GIT_ATTACKS = [
  'config alias.x "!touch pwned"',
  'config --add alias.y "!sh -c id"',
  'config set alias.z "!id"',
  'config Alias.X "!id"',
  'config --local --replace-all alias.w "!id"',
  'config core.fsmonitor "touch pwned"',
  'config core.sshCommand "sh -c id"',
  'config core.hooksPath hooks',
  'config core.pager "sh -c id"',
  'config core.editor "sh -c id"',
  'config sequence.editor "sh -c id"',
  'config core.gitProxy "sh -c id"',
  'config core.askPass ./x',
  'config diff.external ./x',
  'config diff.evil.textconv ./x',
  'config diff.evil.command ./x',
  'config merge.evil.driver ./x',
  'config filter.evil.clean ./x',
  'config filter.evil.smudge ./x',
  'config filter.evil.process ./x',
  'config credential.helper "!sh -c id"',
  'config credential.https://h.example.helper ./x',
  'config include.path /etc/evil',
  'config includeIf.gitdir:/.path evil.cfg',
  'config protocol.ext.allow always',
  'config url.ext::sh.insteadOf https://',
  'config gpg.program ./x',
  'config commit.gpgSign true',
  'config uploadpack.packObjectsHook ./x',
  'config remote.origin.uploadpack ./x',
  'config remote.origin.vcs evil',
  'config submodule.s.update "!sh"',
  'config pager.log "sh -c id"',
  'config interactive.diffFilter ./x',
  'config tar.evil.command ./x',
  'config trace2.eventTarget /tmp/x',
  'config hook.pre-commit.command ./x',
  'config mergetool.evil.cmd ./x',
  'config difftool.evil.cmd ./x',
  'config web.browser ./x',
  'config imap.tunnel ./x',
  'config sendemail.smtpServer ./x',
  'config safe.bareRepository all',
  'config init.templateDir /tmp/t',
  'config --file .git/config alias.x !id',
  'config -f other.cfg alias.x !id',
  'config --global alias.x !id',
  'config --system alias.x !id',
  'config --rename-section foo alias',
  'config --edit',
  '-c alias.x=!id x',
  '-c core.fsmonitor=./x status',
  '--config-env=alias.x=E x',
  'x',
  'Config alias.x !id',
  'lfs env',
  'credential fill',
  'difftool -x ./x',
  'mergetool -t evil',
  'grep -O./x foo',
  'diff --ext-diff',
  'help -w log',
  'maintenance start',
  'daemon --export-all',
  'upload-pack .',
  'instaweb',
  'send-email x.patch',
  'submodule foreach id',
  'bisect run id',
  'rebase -x id main',
  'rebase --exec=id main',
  'fetch --upload-pack=./x origin',
  'clone -u ./x h:r',
  '--exec-path=/tmp x',
  '-C / status',
  '--git-dir=/ status',
];

describe('tool limits: ReDoS in grep, git_exec as a shell', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let c: Client;
  const base = mkdtempSync(join(tmpdir(), 'hecate-tlimits-'));

  const toolResults = (): Json[] => {
    const last = upstream.requests.filter((r) => r.path === '/v1/chat/completions').at(-1);
    return ((last?.body as Json)?.messages as Json[]).filter((m) => m.role === 'tool');
  };
  const runAgent = async (dto: Json, timeoutMs = 120_000) => {
    const { taskId, runId } = await c.startTask({ execution_kind: 'agent_loop', requested_model: 'gpt-4o-mini', prompt: 'go', ...dto });
    return { taskId, runId, run: await c.waitStatus(taskId, runId, ['completed', 'failed', 'cancelled'], timeoutMs) };
  };
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    server = await procs.start(
      'all',
      embeddedTasksEnv({
        ...providerEnv('fake', upstream, { kind: 'local' }),
        GATEWAY_TASK_APPROVAL_POLICIES: 'none',
        GATEWAY_TASK_AGENT_LOOP_MAX_TURNS: '20',
        GATEWAY_TASK_AGENT_SCAN_TIMEOUT: '2s',
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

  it('catastrophic grep patterns end at the scan time limit with a clear error while /healthz answers within 500 ms', async () => {
    const ws = join(base, 'redos');
    mkdirSync(ws);
    writeFileSync(join(ws, 'input.txt'), `${'a'.repeat(40)}!\n`.repeat(50));
    writeFileSync(join(ws, 'ok.txt'), 'findable line\n');
    upstream.script({ toolCalls: REDOS.map((pattern, i) => ({ name: 'grep', arguments: { pattern }, id: `redos_${i}` })) });
    upstream.script({ toolCalls: [{ name: 'grep', arguments: { pattern: 'findable' }, id: 'benign' }] });
    upstream.script({ content: 'done' });
    let polling = true;
    const latencies: number[] = [];
    const poller = (async () => {
      while (polling) {
        const t0 = Date.now();
        const r = await fetch(`${server.url}/healthz`);
        await r.arrayBuffer();
        latencies.push(Date.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const started = Date.now();
    const { run } = await runAgent({ workspace_mode: 'in_place', working_directory: ws }, 90_000);
    const elapsed = Date.now() - started;
    polling = false;
    await poller;
    expect(run.status).toBe('completed');
    const results = toolResults();
    expect(results).toHaveLength(REDOS.length + 1);
    for (const r of results.slice(0, REDOS.length)) expect(r.content).toContain('grep stopped: time limit of 2000 ms exceeded');
    expect(results.at(-1)!.content).toBe('ok.txt:1: findable line');
    // Each call ended at its limit (they run one after another): no call ran on past it.
    expect(elapsed).toBeLessThan(REDOS.length * 2000 + 15_000);
    expect(latencies.length).toBeGreaterThan(REDOS.length * 5);
    // One slow answer is allowed for a loaded machine; the frozen loop of a regex on it would fail every one.
    expect(latencies.filter((ms) => ms >= 500).length).toBeLessThanOrEqual(1);
    expect(Math.max(...latencies)).toBeLessThan(1500);
  }, 120_000);

  it(`refuses ${GIT_ATTACKS.length} git command lines that would run a program, as a git task and as git_exec`, async () => {
    const ws = join(base, 'git-refused');
    mkdirSync(ws);
    git(ws, 'init', '-q');
    let refusedTasks = 0;
    for (const command of GIT_ATTACKS) {
      const r = await c.call('POST', '/hecate/v1/tasks', { execution_kind: 'git', git_command: command, workspace_mode: 'in_place', working_directory: ws });
      expect({ command, status: r.status, type: (r.body as Json).error?.type }).toEqual({ command, status: 400, type: 'invalid_request' });
      refusedTasks += 1;
    }
    expect(refusedTasks).toBe(GIT_ATTACKS.length);
    for (let i = 0; i < GIT_ATTACKS.length; i += 16)
      upstream.script({ toolCalls: GIT_ATTACKS.slice(i, i + 16).map((command, j) => ({ name: 'git_exec', arguments: { command }, id: `git_${i + j}` })) });
    upstream.script({ content: 'done' });
    const { run } = await runAgent({ workspace_mode: 'in_place', working_directory: ws });
    expect(run.status).toBe('completed');
    const results = toolResults();
    expect(results).toHaveLength(GIT_ATTACKS.length);
    for (const [i, r] of results.entries())
      expect({ command: GIT_ATTACKS[i], content: r.content }).toEqual({ command: GIT_ATTACKS[i], content: expect.stringMatching(/^git_command: /) });
    expect(git(ws, 'config', '--local', '--list').toString()).not.toMatch(/alias|fsmonitor|hookspath|helper|include/i);
  }, 120_000);

  it("a repository's own configuration runs no hook, alias or helper, and the file tools cannot write .git", async () => {
    const ws = join(base, 'git-configured');
    mkdirSync(join(ws, 'hooks'), { recursive: true });
    git(ws, 'init', '-q');
    git(ws, 'config', 'user.email', 'a@b.c');
    git(ws, 'config', 'user.name', 'A');
    // Configuration that arrived with the workspace (a clone, a copy, an approved shell command).
    const hook = `#!/bin/sh\ntouch "${ws}/HOOK-RAN"\n`;
    for (const path of [join(ws, 'hooks', 'pre-commit'), join(ws, '.git', 'hooks', 'pre-commit'), join(ws, '.git', 'hooks', 'post-commit')]) {
      writeFileSync(path, hook);
      chmodSync(path, 0o755);
    }
    git(ws, 'config', 'core.hooksPath', join(ws, 'hooks'));
    git(ws, 'config', 'alias.pwn', `!touch "${ws}/ALIAS-RAN"`);
    git(ws, 'config', 'credential.helper', `!touch "${ws}/HELPER-RAN"`);
    const configBefore = readFileSync(join(ws, '.git', 'config'), 'utf8');
    chmodSync(ws, 0o777);
    execFileSync('chmod', ['-R', 'a+rwX', ws]);

    const { taskId, runId } = await c.startTask({
      execution_kind: 'git',
      git_command: 'commit --allow-empty -m hooked',
      workspace_mode: 'in_place',
      working_directory: ws,
    });
    expect(await c.waitStatus(taskId, runId, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(git(ws, 'log', '--format=%s').toString().trim()).toBe('hooked');

    upstream.script({
      toolCalls: [
        { name: 'git_exec', arguments: { command: 'pwn' }, id: 'alias' },
        { name: 'git_exec', arguments: { command: 'commit --allow-empty -m again' }, id: 'commit' },
        { name: 'file_write', arguments: { path: '.git/config', content: '[alias]\n\tx = !id\n' }, id: 'cfg' },
        { name: 'file_write', arguments: { path: '.git/hooks/pre-push', content: '#!/bin/sh\nid\n' }, id: 'hook' },
        { name: 'file_write', arguments: { path: 'sub/.GIT/config', content: '[core]\n\tfsmonitor = id\n' }, id: 'nested' },
      ],
    });
    upstream.script({ content: 'done' });
    const { run } = await runAgent({ workspace_mode: 'in_place', working_directory: ws });
    expect(run.status).toBe('completed');
    const [alias, commit, cfg, hookWrite, nested] = toolResults().map((r) => String(r.content));
    expect(alias).toMatch(/^git_command: git pwn is not a git command/);
    expect(commit).toContain('exit code 0');
    for (const r of [cfg, hookWrite, nested]) expect(r).toContain('the file tools do not write inside .git');
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(configBefore);
    expect(existsSync(join(ws, '.git', 'hooks', 'pre-push'))).toBe(false);
    for (const marker of ['HOOK-RAN', 'ALIAS-RAN', 'HELPER-RAN']) expect({ marker, exists: existsSync(join(ws, marker)) }).toEqual({ marker, exists: false });
  }, 120_000);
});
