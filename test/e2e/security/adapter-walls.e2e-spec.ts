import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HttpClient, request } from '../../support/http';
import { describeWithBwrap, SANDBOX_UID, sandboxOwned } from '../../support/sandbox';
import type { ServerProcess } from '../../support/server-process';
import { createKey, errorType, OPERATOR_TOKEN, startSecured, type TenantKey } from './security-harness';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const asRoot = process.getuid?.() === 0;
/** The running server's own code (the checkout this suite started from). */
const CHECKOUT = join(__dirname, '../../..');
const SECRET_KEY = 'c2VjcmV0LWtleS1hZGFwdGVyLXdhbGxzLTAxMjM0NTY3ODk=';

/** A host with what an attacker's adapter would go for: root-only files, the data dir, a secret file, workspace roots. */
function hostLayout() {
  const base = mkdtempSync(join(tmpdir(), 'hecate-walls-'));
  // Traversable, as an operator's install location must be for the sandbox uid when the workspace is `/` itself.
  chmodSync(base, 0o755);
  const agentDir = join(base, 'agent');
  mkdirSync(agentDir);
  // The hostile agent lives outside the checkout, so nothing of the server's code has to be mounted to run it.
  copyFileSync(join(__dirname, '../../support/acp/probe-agent.mjs'), join(agentDir, 'probe-agent.mjs'));
  const secrets = join(base, 'secrets');
  mkdirSync(secrets);
  writeFileSync(join(secrets, 'secret-key'), `${SECRET_KEY}\n`);
  const rootOnly = join(base, 'root-only');
  mkdirSync(rootOnly, { mode: 0o700 });
  writeFileSync(join(rootOnly, 'secret.txt'), 'root only\n', { mode: 0o600 });
  const roots = join(base, 'roots');
  const proj = join(roots, 'proj'); // root-owned, as host directories usually are
  mkdirSync(proj, { recursive: true, mode: 0o755 });
  writeFileSync(join(proj, 'README.md'), 'tenant project\n');
  const mine = sandboxOwned(mkdirOf(join(roots, 'mine'))); // handed to the sandbox uid by the operator
  const mine2 = sandboxOwned(mkdirOf(join(roots, 'mine2')));
  symlinkSync('/', join(roots, 'to-root'));
  const outside = mkdirOf(join(base, 'outside'));
  return { base, agentDir, secrets, rootOnly, roots, proj, mine, mine2, outside, dataDir: join(base, 'data'), adaptersDir: join(base, 'adapters') };
}
/** A listing that shows nothing: not mounted, not enterable, or an empty cover. */
/** What the sandbox itself puts into an adapter's /run: the egress socket and the forwarder's node (it has network). */
const EGRESS_ENTRIES = ['hecate-egress-node', 'hecate-egress.sock'];
const blank = (v: unknown): boolean =>
  v === 'error:ENOENT' || v === 'error:EACCES' || (Array.isArray(v) && v.filter((name) => !EGRESS_ENTRIES.includes(name as string)).length === 0);
function mkdirOf(p: string): string {
  mkdirSync(p, { recursive: true, mode: 0o755 });
  return p;
}

/**
 * Issue 26 (critical): an API key opened an `external_agent` session on `/` and its adapter ran as root, read
 * /etc/shadow and could write the server's dist/. Issue 26 (medium): tenant B's adapter read tenant A's prompt from
 * the adapter home they shared. Played here with an operator-defined adapter that is a hostile ACP agent
 * (test/support/acp/probe-agent.mjs): it reports its uid and tries to read, write and list what it should not.
 */
describeWithBwrap('external agent adapters behind the walls (embedded, real bubblewrap, a hostile ACP agent)', () => {
  const layout = hostLayout();
  let server: ServerProcess;
  let acme: TenantKey;
  let globex: TenantKey;
  let operator: HttpClient;
  const canary = join(CHECKOUT, 'dist', `pwned-${process.pid}.txt`);

  beforeAll(async () => {
    server = await startSecured({
      GATEWAY_DATA_DIR: layout.dataDir,
      GATEWAY_SECRET_KEY_FILE: join(layout.secrets, 'secret-key'),
      GATEWAY_WORKSPACE_ROOTS: layout.roots,
      GATEWAY_WORKSPACES_DIR: join(layout.base, 'workspaces'),
      GATEWAY_AGENT_ADAPTERS_DIR: layout.adaptersDir,
      GATEWAY_AGENT_ADAPTERS: JSON.stringify([
        { id: 'probe', name: 'Probe Agent', command: process.execPath, args: [join(layout.agentDir, 'probe-agent.mjs')] },
      ]),
      GATEWAY_TASK_SANDBOX_READ_PATHS: layout.agentDir,
      GATEWAY_AGENT_ADAPTER_APPROVAL_MODE: 'auto',
    });
    acme = await createKey(server.url, ['inference', 'operator'], 'acme');
    globex = await createKey(server.url, ['inference', 'operator'], 'globex');
    operator = new HttpClient(server.url, OPERATOR_TOKEN);
  }, 120_000);
  afterAll(() => server?.stop('SIGKILL'));

  const open = (c: HttpClient, workspace: string) =>
    c.call('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'external_agent', adapter_id: 'probe', workspace });
  const say = async (c: HttpClient, id: string, content: string): Promise<string> => {
    const r = await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/messages`, { content });
    expect(r.status).toBe(200);
    const reply = ((r.body.data as Json).messages as Json[]).filter((m) => m.role === 'assistant').at(-1)!;
    expect(reply.status).toBe('completed');
    return reply.content as string;
  };
  const probe = async (c: HttpClient, id: string, spec: { read?: string[]; write?: string[]; list?: string[] }): Promise<Json> =>
    JSON.parse(await say(c, id, `probe ${JSON.stringify(spec)}`)) as Json;
  /** What the server must never show an adapter: its code, data directory, secret files, every adapter's home. */
  const serverPaths = () => ({
    read: [
      '/etc/shadow',
      join(layout.rootOnly, 'secret.txt'),
      join(layout.secrets, 'secret-key'),
      join(CHECKOUT, 'dist/src/main.all.js'),
      join(CHECKOUT, 'src/main.all.ts'),
    ],
    write: [canary, join(layout.dataDir, 'pwned.txt'), join(layout.rootOnly, 'pwned.txt'), '/etc/pwned.txt'],
    list: [join(CHECKOUT, 'dist'), join(CHECKOUT, 'src'), layout.dataDir],
  });
  /** Nothing listed, nothing read, nothing written (ENOENT when not mounted, EACCES/EROFS where a wall stands). */
  const expectWalled = (seen: Json) => {
    const leaked = (v: unknown) => typeof v === 'string' && !v.startsWith('error:');
    for (const [path, v] of Object.entries(seen.read as Json)) {
      if (path === join(layout.secrets, 'secret-key')) expect([v, path]).toEqual([expect.not.stringContaining(SECRET_KEY), path]);
      else expect([path, leaked(v)]).toEqual([path, false]);
    }
    for (const [path, v] of Object.entries(seen.write as Json)) expect([path, v]).toEqual([path, expect.stringMatching(/^error:/)]);
    // (The adapters' homes: each sees the way to its own, checked on its own.)
    const listed = Object.entries(seen.list as Json).filter(([path]) => path !== join(layout.adaptersDir, 'homes'));
    expect(Object.fromEntries(listed.filter(([, v]) => !blank(v)))).toEqual({});
    expect(existsSync(canary)).toBe(false);
    expect(existsSync(join(layout.dataDir, 'pwned.txt'))).toBe(false);
    expect(existsSync(join(layout.rootOnly, 'pwned.txt'))).toBe(false);
  };

  it('an API key cannot open a session outside GATEWAY_WORKSPACE_ROOTS: / and every way around it answer 400 like a missing directory', async () => {
    const attempts = [
      '/',
      '/etc',
      CHECKOUT,
      layout.dataDir,
      layout.outside,
      join(layout.roots, 'to-root'), // a symlink inside the roots that points at /
      join(layout.roots, '..', 'outside'),
      join(layout.roots, 'missing'),
      'roots/proj', // relative
    ];
    const answers = new Set<string>();
    for (const workspace of attempts) {
      const r = await open(acme.client, workspace);
      expect([workspace, r.status, errorType(r)]).toEqual([workspace, 400, 'invalid_request']);
      answers.add(String((r.body as Json).error.message).replace(JSON.stringify(workspace), 'W'));
    }
    // Forbidden and missing read the same: the answer does not tell which host directories exist.
    expect([...answers]).toEqual(['workspace W is not an existing directory under GATEWAY_WORKSPACE_ROOTS']);
    const sessions = (await acme.client.call('GET', '/hecate/v1/agent-chat/sessions')).body.data as Json[];
    expect(sessions).toEqual([]);
  });

  it('on an allowed root the adapter runs as the sandbox uid: no root-only file, no write outside its workspace, no server data, secrets or code', async () => {
    const r = await open(acme.client, layout.proj);
    expect(r.status).toBe(200);
    const id = (r.body.data as Json).id as string;
    const seen = await probe(acme.client, id, {
      ...serverPaths(),
      write: [...serverPaths().write, join(layout.proj, 'x.txt')],
      list: [...serverPaths().list, join(layout.adaptersDir, 'homes')],
    });
    if (asRoot) expect([seen.uid, seen.gid]).toEqual([SANDBOX_UID, SANDBOX_UID]);
    expect(seen.uid).not.toBe(0);
    expectWalled(seen);
    // Of all the adapters' homes it sees only the way to its own tenant's.
    expect((seen.list as Json)[join(layout.adaptersDir, 'homes')]).toEqual([expect.stringMatching(/^acme-/)]);
    // The workspace is root-owned here: an adapter that is not root cannot write into it.
    expect(existsSync(join(layout.proj, 'x.txt'))).toBe(false);
    expect((seen.read as Json)['/etc/shadow']).toBe('error:EACCES');
  });

  it('in a workspace the sandbox uid owns the adapter writes there (and only there: its /tmp is private)', async () => {
    const r = await open(acme.client, layout.mine);
    expect(r.status).toBe(200);
    const id = (r.body.data as Json).id as string;
    const tmpName = `/tmp/walls-${process.pid}.txt`;
    const seen = await probe(acme.client, id, { write: [join(layout.mine, 'ok.txt'), tmpName], list: [layout.roots] });
    expect(seen.write).toEqual({ [join(layout.mine, 'ok.txt')]: 'wrote', [tmpName]: 'wrote' });
    expect(statSync(join(layout.mine, 'ok.txt')).uid).toBe(asRoot ? SANDBOX_UID : process.getuid!());
    expect(existsSync(tmpName)).toBe(false);
    // Its own workspace is all it sees of the roots (the sibling projects are not mounted).
    expect((seen.list as Json)[layout.roots]).toEqual(['mine']);
  });

  it('an operator session in place on / still runs the adapter unprivileged, with the server data, secrets, code and homes hidden', async () => {
    const r = await open(operator, '/');
    expect([r.status, r.status === 200 ? '' : r.text]).toEqual([200, '']);
    const id = (r.body.data as Json).id as string;
    const seen = await probe(operator, id, { ...serverPaths(), list: [...serverPaths().list, join(layout.adaptersDir, 'homes'), '/run', '/var/tmp'] });
    if (asRoot) expect(seen.uid).toBe(SANDBOX_UID);
    expectWalled(seen);
    expect((seen.read as Json)['/etc/shadow']).toBe('error:EACCES');
    expect((seen.read as Json)[join(layout.secrets, 'secret-key')]).toMatch(/^(error:.*)?$/);
    // The host's sockets (Postgres trusts local connections) and shared scratch are not there: /run holds only what the
    // sandbox put there for the adapter's network (the egress socket and the forwarder's node).
    expect([(seen.list as Json)['/run'], (seen.list as Json)['/var/tmp']]).toEqual([EGRESS_ENTRIES, []]);
    // Only the way to the operator tenant's own home (acme's and globex's are not there).
    expect((seen.list as Json)[join(layout.adaptersDir, 'homes')]).toEqual([expect.stringMatching(/^default-/)]);
  });

  it("one adapter home per tenant: globex's adapter cannot read what acme's adapter wrote to its HOME", async () => {
    const a = await open(acme.client, layout.mine);
    const b = await open(globex.client, layout.mine2);
    expect([a.status, b.status]).toEqual([200, 200]);
    const said = await say(acme.client, (a.body.data as Json).id as string, 'remember ACME-PROMPT-7f3a');
    const homeA = said.replace('remembered in ', '');
    expect(readFileSync(join(homeA, 'notes.txt'), 'utf8')).toBe('ACME-PROMPT-7f3a');

    const bId = (b.body.data as Json).id as string;
    const seen = await probe(globex.client, bId, { read: [join(homeA, 'notes.txt')], list: [dirname(homeA), dirname(dirname(homeA))] });
    // Its own HOME holds nothing of acme's, and acme's is not there to read.
    const own = await probe(globex.client, bId, { read: [join(seen.home as string, 'notes.txt')], list: [seen.home as string] });
    expect(JSON.stringify([seen, own])).not.toContain('ACME-PROMPT');
    expect(seen.home).not.toBe(homeA);
    expect((seen.read as Json)[join(homeA, 'notes.txt')]).toMatch(/^error:/);
    expect((own.read as Json)[join(seen.home as string, 'notes.txt')]).toBe('error:ENOENT');
    expect((seen.list as Json)[dirname(homeA)]).toMatch(/^error:/);
    expect((seen.list as Json)[dirname(dirname(homeA))]).toEqual([expect.stringMatching(/^globex-/)]);
    // On the host: private to the uid the adapter runs as.
    const st = statSync(homeA);
    expect(st.mode & 0o777).toBe(0o700);
    if (asRoot) expect(st.uid).toBe(SANDBOX_UID);
  });

  it('the server stays healthy', async () => {
    expect((await request(server.url, 'GET', '/healthz')).status).toBe(200);
  });
});
