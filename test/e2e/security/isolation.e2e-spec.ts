import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ScratchDatabase, waitFor } from '../../support/infra';
import { bwrapWorks, describeWithBwrap, itWithBwrap, processRunning } from '../../support/sandbox';
import { seedOnFirstStart, ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes, scaledEnv, TOKEN } from '../tasks/tasks-harness';

/**
 * An attacker's view of the tools a task runs (docs/security.md): a command chosen by a tenant — or, next, by a model —
 * must not read the server's environment, data directory, secret files or other workspaces, must not outlive a
 * killed worker, and must not escape through git or a clone. Without OS isolation commands are refused unless the
 * operator opted out.
 */

const asRoot = process.getuid?.() === 0;

const PROVIDER_KEY = 'sk-isolation-provider-secret-0123456789';
const SECRET_KEY = 'c2VjcmV0LWtleS1mb3ItaXNvbGF0aW9uLXRlc3RzLTAxMjM0NTY3ODk=';
const SECRETS = [TOKEN, PROVIDER_KEY, SECRET_KEY];

/** A host layout with secrets where a careless sandbox would show them. */
function hostLayout() {
  const base = mkdtempSync(join(tmpdir(), 'hecate-iso-'));
  const secrets = join(base, 'secrets');
  mkdirSync(secrets);
  writeFileSync(join(secrets, 'secret-key'), `${SECRET_KEY}\n`);
  writeFileSync(join(secrets, 'auth-token'), `${TOKEN}\n`);
  const roots = join(base, 'roots');
  mkdirSync(join(roots, 'proj'), { recursive: true });
  writeFileSync(join(roots, 'proj', 'README.md'), 'tenant project\n');
  // The operator's project directory holds the server's data directory (as `npm start` in a checkout does).
  const project = join(base, 'project');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'src', 'main.ts'), 'export {};\n');
  const big = join(base, 'big');
  mkdirSync(big);
  writeFileSync(join(big, 'blob.bin'), Buffer.alloc(512 * 1024, 1));
  return { base, secrets, roots, project, dataDir: join(project, '.data'), big };
}

function serverEnv(layout: ReturnType<typeof hostLayout>, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    ...embeddedTasksEnv({ GATEWAY_TASK_APPROVAL_POLICIES: 'none' }),
    GATEWAY_DATA_DIR: layout.dataDir,
    GATEWAY_AUTH_TOKEN: '',
    GATEWAY_AUTH_TOKEN_FILE: join(layout.secrets, 'auth-token'),
    GATEWAY_SECRET_KEY_FILE: join(layout.secrets, 'secret-key'),
    PROVIDER_ISOLATED_BASE_URL: 'https://api.isolated.example/v1',
    PROVIDER_ISOLATED_API_KEY: PROVIDER_KEY,
    GATEWAY_WORKSPACE_ROOTS: layout.roots,
    GATEWAY_WORKSPACE_COPY_MAX_BYTES: String(256 * 1024),
    ...extra,
  };
  // The first server on each data directory starts from the migrated template, as every other e2e server does.
  seedOnFirstStart(env.GATEWAY_DATA_DIR);
  return env;
}

/**
 * Starts `sleep <marker>` the way a worker does (test/support/doomed-worker-process.js) and SIGKILLs that worker 0–4 ms
 * after the spawn, 15 times; counts the runs that left a `sleep <marker>` running a few seconds later.
 */
async function killDuringSpawn(marker: string, mode: 'auto' | 'none'): Promise<{ killed: number; leftBehind: number }> {
  const workspaces = mkdtempSync(join(tmpdir(), 'hecate-doomed-ws-'));
  const workspace = join(workspaces, 'run');
  mkdirSync(workspace);
  if (asRoot) execFileSync('chown', ['65534:65534', workspace]);
  let killed = 0;
  let leftBehind = 0;
  for (let i = 0; i < 15; i++) {
    const worker = spawn(process.execPath, [join(__dirname, '../../support/doomed-worker-process.js'), marker, String(i % 5), workspace, mode], {
      stdio: 'ignore',
    });
    const { signal } = await new Promise<{ signal: NodeJS.Signals | null }>((resolve) => worker.once('exit', (_code, sig) => resolve({ signal: sig })));
    if (signal === 'SIGKILL') killed++;
    const gone = await waitFor(() => !processRunning(`sleep ${marker}`), { timeoutMs: 3000, what: 'x' }).then(
      () => true,
      () => false,
    );
    if (!gone) {
      leftBehind++;
      spawnSync('pkill', ['-KILL', '-f', `sleep ${marker}`]);
    }
  }
  return { killed, leftBehind };
}

describe('tool isolation', () => {
  const procs = new Processes();
  const layout = hostLayout();
  let sandboxed: ServerProcess;
  let refusing: ServerProcess;
  let optedOut: ServerProcess;
  let a: Client;
  let tenant: Client;

  const run = async (c: Client, dto: Json, statuses = ['completed', 'failed', 'cancelled']) => {
    const { taskId, runId, run: started } = await c.startTask({ execution_kind: 'shell', ...dto });
    const finished = await c.waitStatus(taskId, runId, statuses);
    const artifacts = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts`)) as unknown as Json[];
    const text = async (kind: string) => {
      const found = artifacts.find((x) => x.kind === kind);
      return found ? ((await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts/${found.id}`)).content_text as string) : '';
    };
    return { taskId, runId, run: { ...started, ...finished }, stdout: await text('stdout'), stderr: await text('stderr') };
  };

  beforeAll(async () => {
    const missingBwrap = join(layout.base, 'no-such-bwrap');
    [sandboxed, refusing, optedOut] = await Promise.all([
      procs.start('all', serverEnv(layout, { GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'true' })),
      procs.start('all', serverEnv(layout, { GATEWAY_DATA_DIR: join(layout.base, 'refusing-data'), GATEWAY_TASK_SANDBOX_BWRAP: missingBwrap })),
      procs.start(
        'all',
        serverEnv(layout, { GATEWAY_DATA_DIR: join(layout.base, 'opted-out-data'), GATEWAY_TASK_SANDBOX: 'none', GATEWAY_TASK_SANDBOX_BWRAP: missingBwrap }),
      ),
    ]);
    a = new Client(sandboxed.url);
    const key = await a.ok('POST', '/hecate/v1/api-keys', { name: 'tenant-b', scopes: ['inference', 'operator'], tenant_id: 'tenant-b' });
    tenant = new Client(sandboxed.url, key.secret as string);
  }, 120_000);
  afterAll(() => procs.stopAll());

  if (!bwrapWorks && process.env.CI === 'true') {
    it('needs bubblewrap under CI=true', () => {
      throw new Error('bubblewrap (bwrap) is required under CI=true: install the Debian package bubblewrap (.ci/run does)');
    });
  }

  describe('secrets as files', () => {
    it('reads GATEWAY_AUTH_TOKEN_FILE and GATEWAY_SECRET_KEY_FILE: the token from the file authenticates, a wrong one does not', async () => {
      expect((await a.call('GET', '/hecate/v1/tasks')).status).toBe(200);
      expect((await new Client(sandboxed.url, 'not-the-token').call('GET', '/hecate/v1/tasks')).status).toBe(401);
      expect(sandboxed.output()).not.toContain(TOKEN);
      expect(sandboxed.output()).not.toContain(SECRET_KEY);
    });
  });

  describeWithBwrap('with bubblewrap', () => {
    it('says in /healthz that commands are isolated and who they run as', async () => {
      const health = (await (await fetch(`${sandboxed.url}/healthz`)).json()) as Json;
      expect(health.sandbox).toEqual({
        os_isolation: true,
        layer: 'bwrap',
        commands: 'allowed',
        run_as: asRoot ? 'uid 65534' : 'server user',
        limits: expect.objectContaining({ enforced: true }),
      });
    });

    it("a shell command cannot read the worker's environment, data directory, secret files or the host", async () => {
      const probe = [
        'id -u',
        'cat /proc/$PPID/environ /proc/1/environ 2>&1',
        'for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done',
        'env',
        `cat ${join(layout.secrets, 'secret-key')} ${join(layout.secrets, 'auth-token')} 2>&1`,
        `ls -la ${layout.dataDir} ${layout.project} 2>&1`,
        `cat ${join(layout.dataDir, 'secret.key')} 2>&1`,
        'ls /root /home /var 2>&1',
        'ls -d /proc/[0-9]*',
      ].join('; echo ---; ');
      const { run: r, stdout, stderr } = await run(a, { shell_command: probe });
      if (r.status !== 'completed') throw new Error(JSON.stringify({ error: r.last_error, stdout, stderr }));
      const seen = stdout + stderr;
      for (const secret of SECRETS) expect(seen).not.toContain(secret);
      expect(seen).not.toContain('PROVIDER_ISOLATED');
      expect(seen).not.toContain('GATEWAY_');
      expect(seen).not.toContain('pglite');
      if (asRoot) expect(stdout.split('\n')[0]).toBe('65534');
      // Its own PID namespace: only the sandbox's processes exist (bubblewrap's init, the lifeline's reader, the shell).
      const processes = stdout.split('---').pop()!.trim().split('\n');
      expect(processes.length).toBeLessThanOrEqual(5);
    });

    it('a command that prints NUL bytes completes with its output kept (U+FFFD in their place)', async () => {
      const { run: r, stdout } = await run(a, { shell_command: "printf 'a\\000b\\n'" });
      expect(r.status).toBe('completed');
      expect(stdout).toBe('a\uFFFDb\n');
    });

    it("a tenant's command cannot see another run's workspace", async () => {
      const first = await run(a, { shell_command: 'echo tenant-a-private > notes.txt' });
      expect(first.run.status).toBe('completed');
      const { stdout } = await run(tenant, {
        shell_command: `cat ${join(first.run.workspace_path, 'notes.txt')} 2>&1; ls ${join(first.run.workspace_path, '..')} 2>&1`,
      });
      expect(stdout).not.toContain('tenant-a-private');
      expect(stdout).toContain('No such file or directory');
    });

    it('an in-place workspace that holds the data directory does not show it', async () => {
      const { run: r, stdout } = await run(a, {
        workspace_mode: 'in_place',
        working_directory: layout.project,
        shell_command: 'ls -a . .data 2>&1; cat .data/secret.key 2>&1; true',
      });
      expect(r.status).toBe('completed');
      expect(stdout).toContain('src');
      expect(existsSync(join(layout.dataDir, 'pglite')) || readdirSync(layout.dataDir).length > 0).toBe(true);
      for (const name of readdirSync(layout.dataDir)) expect(stdout).not.toContain(name);
    });

    it('a killed worker leaves no running command behind (kill -9)', async () => {
      const doomed = await procs.start('all', serverEnv(layout, { GATEWAY_DATA_DIR: join(layout.base, 'doomed-data') }));
      const c = new Client(doomed.url);
      // A marker of this run's own: a command another run left behind (an older build's, say) must not be counted.
      const sleep = `sleep ${3_000_000 + Math.floor(Math.random() * 900_000)}`;
      const { taskId, runId } = await c.startTask({ execution_kind: 'shell', shell_command: `${sleep} & ${sleep}; wait` });
      await c.waitStatus(taskId, runId, ['running']);
      await waitFor(() => processRunning(sleep), { what: 'the sandboxed commands to run' });
      await doomed.stop('SIGKILL');
      await waitFor(() => !processRunning(sleep), { timeoutMs: 5000, what: 'every process of the killed worker’s command to be gone' });
    });

    it("the lifeline's reader never speaks in a command's output: 40 sandboxed `echo hi`, stdout 'hi', stderr empty", async () => {
      // bubblewrap's outer process exits with the command, before its namespace is gone: the reader then sees end of
      // file with nothing left to kill (3 in 40 printed "kill: No such process" into the command's stderr before).
      const dist = join(__dirname, '../../../dist/src');
      /* eslint-disable @typescript-eslint/no-require-imports */
      const { loadConfig } = require(join(dist, 'core/config/config.loader.js')) as typeof import('../../../src/core/config/config.loader');
      const { SandboxService } = require(
        join(dist, 'modules/workspaces/sandbox/sandbox.service.js'),
      ) as typeof import('../../../src/modules/workspaces/sandbox/sandbox.service');
      const { SupervisedProcess } = require(
        join(dist, 'modules/workspaces/sandbox/supervised-process.js'),
      ) as typeof import('../../../src/modules/workspaces/sandbox/supervised-process');
      /* eslint-enable @typescript-eslint/no-require-imports */
      const workspaces = mkdtempSync(join(tmpdir(), 'hecate-quiet-ws-'));
      const workspace = join(workspaces, 'run');
      mkdirSync(workspace);
      if (asRoot) execFileSync('chown', ['65534:65534', workspace]);
      const sandbox = new SandboxService(
        loadConfig({ PATH: process.env.PATH, GATEWAY_DATA_DIR: mkdtempSync(join(tmpdir(), 'hecate-quiet-')), GATEWAY_WORKSPACES_DIR: workspaces }),
      );
      await sandbox.onModuleInit();
      try {
        const outputs = new Set<string>();
        for (let i = 0; i < 40; i++) {
          const argv = sandbox.wrap(['sh', '-c', 'echo hi'], { workspace, cwd: workspace, readOnly: false, network: false });
          const proc = SupervisedProcess.spawn({ argv, cwd: workspace, env: { PATH: '/usr/bin:/bin' }, stdin: 'ignore', graceMs: 1000 });
          let out = '';
          let err = '';
          proc.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
          proc.child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
          const exit = await proc.exited;
          outputs.add(JSON.stringify({ exit, out, err }));
        }
        expect([...outputs]).toEqual([JSON.stringify({ exit: { code: 0, signal: null }, out: 'hi\n', err: '' })]);
      } finally {
        await sandbox.onModuleDestroy();
      }
    });

    it('a worker killed while bubblewrap is still setting the sandbox up leaves nothing behind either (15 kills, 0–4 ms after the spawn)', async () => {
      // Without the lifeline most of these left a sandbox running for good: bubblewrap arms --die-with-parent only
      // once the namespaces are made.
      expect(await killDuringSpawn('3000124', 'auto')).toEqual({ killed: 15, leftBehind: 0 });
    });
  });

  describe('without OS isolation', () => {
    it('refuses commands unless the operator opted out, and says so in /healthz and the startup log', async () => {
      const health = (await (await fetch(`${refusing.url}/healthz`)).json()) as Json;
      expect(health.sandbox).toMatchObject({ os_isolation: false, layer: 'unavailable', commands: 'refused' });
      expect(refusing.output()).toContain('REFUSED');
      const c = new Client(refusing.url);
      const { run: r } = await run(c, { shell_command: 'touch ran' });
      expect(r.status).toBe('failed');
      expect(r.last_error ?? r.error).toContain('GATEWAY_TASK_SANDBOX=none');
      expect(existsSync(join(r.workspace_path, 'ran'))).toBe(false);
      const steps = (await c.ok('GET', `/hecate/v1/tasks/${r.task_id}/runs/${r.id}/steps`)) as unknown as Json[];
      expect(steps.find((s) => s.kind === 'shell')).toMatchObject({ status: 'failed', error_kind: 'sandbox_unavailable' });
    });

    it("GATEWAY_TASK_SANDBOX=none runs them (logged as such) as an unprivileged uid that cannot read the worker's environment", async () => {
      const health = (await (await fetch(`${optedOut.url}/healthz`)).json()) as Json;
      expect(health.sandbox).toEqual({
        os_isolation: false,
        layer: 'none',
        commands: 'allowed',
        run_as: asRoot ? 'uid 65534' : 'server user',
        limits: expect.any(Object),
      });
      expect(optedOut.output()).toContain('WITHOUT OS isolation');
      const { run: r, stdout, stderr } = await run(new Client(optedOut.url), { shell_command: 'id -u; cat /proc/$PPID/environ 2>&1; echo' });
      expect(r.status).toBe('completed');
      if (asRoot) {
        expect(stdout.split('\n')[0]).toBe('65534');
        for (const secret of SECRETS) expect(stdout + stderr).not.toContain(secret);
        expect(stdout).toContain('Permission denied');
      }
    });
  });

  describe('without OS isolation, a killed worker', () => {
    it('leaves no command behind either: the lifeline kills its process group (15 kills, 0–4 ms after the spawn)', async () => {
      expect(await killDuringSpawn('3000125', 'none')).toEqual({ killed: 15, leftBehind: 0 });
    });
  });

  describe('workspace roots', () => {
    it('API keys may use host directories only under GATEWAY_WORKSPACE_ROOTS; the operator anywhere', async () => {
      for (const dto of [
        { workspace_mode: 'in_place', working_directory: '/etc' },
        { working_directory: layout.project },
        { working_directory: layout.dataDir },
        { working_directory: layout.roots + '/../secrets' },
        { workspace_mode: 'in_place', working_directory: join(layout.roots, 'proj'), sandbox_allowed_root: '/' },
        { repo: layout.project },
      ]) {
        const res = await tenant.call('POST', '/hecate/v1/tasks', { execution_kind: 'shell', shell_command: 'true', ...dto });
        expect({ dto, status: res.status }).toEqual({ dto, status: 400 });
        expect(res.body.error.message).toContain('GATEWAY_WORKSPACE_ROOTS');
      }
      const inRoot = await run(tenant, { workspace_mode: 'in_place', working_directory: join(layout.roots, 'proj'), shell_command: 'cat README.md' });
      expect(inRoot.stdout).toBe('tenant project\n');
      // The directory under the roots is root-owned: the tenant's command still runs as the sandbox uid, never root.
      if (asRoot) {
        const who = await run(tenant, {
          workspace_mode: 'in_place',
          working_directory: join(layout.roots, 'proj'),
          shell_command: 'id -u; cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ; touch planted 2>/dev/null && echo PLANTED; true',
        });
        expect(who.stdout).toBe('65534\n');
        expect(existsSync(join(layout.roots, 'proj', 'planted'))).toBe(false);
      }
      const copied = await run(tenant, { working_directory: join(layout.roots, 'proj'), shell_command: 'ls' });
      expect(copied.stdout).toBe('README.md\n');
      expect((await a.call('POST', '/hecate/v1/tasks', { execution_kind: 'shell', shell_command: 'true', working_directory: layout.project })).status).toBe(
        200,
      );
    });

    it('a copied workspace never takes the data directory along, and a huge source is refused', async () => {
      const { run: r, stdout } = await run(a, { working_directory: layout.project, shell_command: 'ls -a' });
      expect(r.status).toBe('completed');
      expect(stdout.split('\n')).toEqual(expect.arrayContaining(['.', '..', 'src']));
      expect(stdout).not.toContain('.data');
      const big = await run(a, { working_directory: layout.big, shell_command: 'true' });
      expect(big.run.status).toBe('failed');
      expect(big.run.last_error ?? big.run.error).toContain('GATEWAY_WORKSPACE_COPY_MAX_BYTES');
    });
  });

  describe('git', () => {
    it.each([
      ['-c alias.x=!touch /tmp/pwned x', '-c'],
      ['-c core.fsmonitor="touch /tmp/pwned" status', '-c'],
      ['--config-env=core.pager=X log', '--config-env'],
      ['-C / status', '-C'],
      ['clone --upload-pack="touch /tmp/pwned" /x y', '--upload-pack'],
      ['clone -u "touch /tmp/pwned" /x y', '-u'],
      ['push --receive-pack="touch /tmp/pwned" origin main', '--receive-pack'],
      ['archive --exec="touch /tmp/pwned" --remote=/x HEAD', '--exec'],
      ['clone -c core.sshCommand="touch /tmp/pwned" ssh://h/x y', '-c'],
      ['rebase -x "touch /tmp/pwned" HEAD~1', '-x'],
      ['submodule foreach "touch /tmp/pwned"', 'foreach'],
      ['bisect run touch /tmp/pwned', 'bisect run'],
    ])('refuses `git %s` at create, naming %s', async (command, named) => {
      const res = await a.call('POST', '/hecate/v1/tasks', { execution_kind: 'git', git_command: command });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.error)).toContain(named);
    });

    it("ignores the workspace's global git config and never runs a repository's fsmonitor outside the sandbox", async () => {
      const repo = join(layout.base, 'hostile-repo');
      const marker = join(layout.base, 'fsmonitor-ran');
      mkdirSync(repo);
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: repo, env: { PATH: process.env.PATH } });
      git('init', '-q');
      writeFileSync(join(repo, 'a.txt'), 'a\n');
      git('add', '.');
      git('commit', '-qm', 'first');
      git('config', 'core.fsmonitor', `touch ${marker}; false`);
      // HOME is the workspace: its .gitconfig is git's global configuration there.
      writeFileSync(join(repo, '.gitconfig'), `[alias]\n\tst = !touch ${marker}\n`);
      // An alias is not a git command git_exec runs: refused at create, before any git process.
      const aliased = await a.call('POST', '/hecate/v1/tasks', { execution_kind: 'git', git_command: 'st', working_directory: repo });
      expect({ status: aliased.status, type: aliased.body.error?.type }).toEqual({ status: 400, type: 'invalid_request' });
      const status = await a.startTask({ execution_kind: 'git', git_command: 'status --short', working_directory: repo });
      expect((await a.waitStatus(status.taskId, status.runId, ['completed', 'failed'])).status).toBe('completed');
      expect(existsSync(marker)).toBe(false);
    });
  });

  describe('repo clones go through the outbound policy', () => {
    let origin: Server;
    let hits = 0;
    let base = '';

    beforeAll(async () => {
      // A dumb-HTTP git server: the bare repository's files, served as they are.
      const bare = join(layout.base, 'served.git');
      const work = join(layout.base, 'served-src');
      mkdirSync(work);
      const git = (cwd: string, ...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd, env: { PATH: process.env.PATH } });
      git(work, 'init', '-q', '-b', 'main');
      writeFileSync(join(work, 'hello.txt'), 'cloned over http\n');
      git(work, 'add', '.');
      git(work, 'commit', '-qm', 'first');
      git(layout.base, 'clone', '-q', '--bare', work, bare);
      git(bare, 'update-server-info');
      origin = createServer((req, res) => {
        hits++;
        if (req.url?.startsWith('/redirect/')) {
          res.writeHead(302, { location: `http://169.254.169.254${req.url.slice('/redirect'.length)}` }).end();
          return;
        }
        const path = join(bare, decodeURIComponent((req.url ?? '/').split('?')[0].replace(/^\/repo\.git/, '')));
        try {
          res.end(readFileSync(path));
        } catch {
          res.writeHead(404).end();
        }
      });
      await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
    });
    afterAll(() => origin?.close());

    it('refuses private, metadata and credential-bearing URLs at create, and a network clone without sandbox_network', async () => {
      const c = new Client(optedOut.url);
      const before = hits;
      for (const [repo, network, message] of [
        [`${base}/repo.git`, true, 'private or loopback'],
        ['http://169.254.169.254/latest/meta-data', true, 'metadata'],
        ['http://169.254.10.1/x.git', true, 'link-local'],
        ['http://metadata.google.internal/x.git', true, 'metadata'],
        ['http://user:pw@example.com/x.git', true, 'credentials'],
        ['ext::sh -c touch% /tmp/pwned', true, 'http(s) URL'],
        [`${base}/repo.git`, false, 'sandbox_network=true'],
      ] as const) {
        const res = await c.call('POST', '/hecate/v1/tasks', { execution_kind: 'shell', shell_command: 'true', repo, sandbox_network: network });
        expect({ repo, status: res.status }).toEqual({ repo, status: 400 });
        expect(res.body.error.message).toContain(message);
      }
      expect(hits).toBe(before);
    });

    itWithBwrap("clones a local repository that belongs to another user than the sandbox's (root's checkout), as the sandbox's uid", async () => {
      const local = join(layout.roots, 'owned-by-server');
      mkdirSync(local);
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: local, env: { PATH: process.env.PATH } });
      git('init', '-q', '-b', 'main');
      writeFileSync(join(local, 'hello.txt'), 'cloned from a local path\n');
      git('add', '.');
      git('commit', '-qm', 'first');
      const { run: r, stdout, stderr } = await run(a, { repo: local, shell_command: 'cat hello.txt; stat -c %u hello.txt; git log --format=%s' });
      expect({ status: r.status, error: r.last_error ?? r.error ?? null, stderr }).toEqual({ status: 'completed', error: null, stderr: '' });
      expect(stdout).toBe(`cloned from a local path\n${asRoot ? 65534 : process.getuid?.()}\nfirst\n`);
    });

    itWithBwrap('clones an allowed URL inside the sandbox as the unprivileged uid, without following redirects', async () => {
      const { run: r, stdout } = await run(a, { repo: `${base}/repo.git`, sandbox_network: true, shell_command: 'cat hello.txt; stat -c %u hello.txt' });
      expect(r.status).toBe('completed');
      expect(stdout).toBe(`cloned over http\n${asRoot ? 65534 : process.getuid?.()}\n`);
      const redirected = await run(a, { repo: `${base}/redirect/repo.git`, sandbox_network: true, shell_command: 'true' });
      expect(redirected.run.status).toBe('failed');
      expect(redirected.run.last_error ?? redirected.run.error).toContain('git clone');
    });
  });
});

/** The same attack on the scaled deployment: the command runs on a worker process that holds DATABASE_URL and REDIS_URL. */
describe('tool isolation (scaled worker)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let c: Client;
  let worker: ServerProcess;

  beforeAll(async () => {
    const s = await scaledEnv({
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      PROVIDER_ISOLATED_BASE_URL: 'https://api.isolated.example/v1',
      PROVIDER_ISOLATED_API_KEY: PROVIDER_KEY,
    });
    db = s.db;
    env = s.env;
    const [api, w] = await Promise.all([procs.start('api', env), procs.start('worker', env)]);
    c = new Client(api.url);
    worker = w;
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await db?.drop();
  });

  itWithBwrap("a shell task cannot read the worker's DATABASE_URL, REDIS_URL, operator token or provider key", async () => {
    const health = (await (await fetch(`${worker.url}/healthz`)).json()) as Json;
    expect(health.sandbox).toMatchObject({ os_isolation: true, commands: 'allowed' });
    const probe = 'cat /proc/$PPID/environ /proc/1/environ 2>&1; for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; done; env; true';
    const { taskId, runId } = await c.startTask({ execution_kind: 'shell', shell_command: probe });
    expect((await c.waitStatus(taskId, runId, ['completed', 'failed'])).status).toBe('completed');
    const artifacts = (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts`)) as unknown as Json[];
    let seen = '';
    for (const a of artifacts) seen += (await c.ok('GET', `/hecate/v1/tasks/${taskId}/runs/${runId}/artifacts/${a.id}`)).content_text as string;
    for (const secret of [env.DATABASE_URL, env.REDIS_URL, TOKEN, PROVIDER_KEY]) expect(seen).not.toContain(secret);
    expect(seen).not.toContain('postgres://');
  });
});
