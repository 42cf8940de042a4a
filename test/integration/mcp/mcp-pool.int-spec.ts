import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { McpServerSpec, McpToolSet } from '@modules/mcp';
import { waitFor } from '../../support/infra';
import { EVERYTHING, FILESYSTEM, MISBEHAVING, openPool, PoolHarness, processesMatching, startEverythingHttp } from './mcp-harness';

const signal = () => new AbortController().signal;
const call = (set: McpToolSet, alias: string, args: Record<string, unknown> = {}, timeoutMs?: number) => set.call(alias, args, { signal: signal(), timeoutMs });

describe('McpClientPool against real MCP servers, stdio servers under the real sandbox', () => {
  let h: PoolHarness;
  let ws: string;
  const held: McpToolSet[] = [];
  const open = async (tenant: string, servers: McpServerSpec[], workspace = ws) => {
    const set = await h.pool.open(tenant, servers, { workspace, signal: signal() });
    held.push(set);
    return set;
  };
  const misbehaving = (name: string, extra: Partial<McpServerSpec> = {}, tag = randomUUID()): McpServerSpec => ({
    name,
    command: 'node',
    args: [MISBEHAVING, `--tag=${tag}`],
    ...extra,
  });

  beforeAll(() => {
    h = openPool();
    ws = h.workspace();
  });
  afterEach(async () => {
    await Promise.all(held.splice(0).map((s) => s.release()));
  });
  afterAll(async () => {
    await h.close();
  });

  it('runs under bubblewrap on this host (the suite needs it)', () => {
    expect(h.sandbox.describe()).toMatchObject({ os_isolation: true, commands: 'allowed' });
  });

  it('server-everything over stdio: tools under mcp__<server>__<tool>, echo and get-sum', async () => {
    const set = await open('tenant-a', [{ name: 'every', command: 'node', args: [EVERYTHING, 'stdio'], approval_policy: 'require_approval' }]);
    const aliases = set.tools.map((t) => t.alias);
    expect(aliases).toEqual(expect.arrayContaining(['mcp__every__echo', 'mcp__every__get-sum']));
    const echo = set.tools.find((t) => t.alias === 'mcp__every__echo')!;
    expect(echo).toMatchObject({ server: 'every', name: 'echo', approvalPolicy: 'require_approval', inputSchema: { type: 'object' } });
    expect(echo.description).not.toBe('');
    expect(await call(set, 'mcp__every__echo', { message: 'hello pool' })).toMatchObject({ isError: false, text: expect.stringContaining('hello pool') });
    expect(await call(set, 'mcp__every__get-sum', { a: 2, b: 40 })).toMatchObject({ isError: false, text: expect.stringContaining('42') });
    // Bad arguments and unknown tools are tool errors, not exceptions.
    expect(await call(set, 'mcp__every__get-sum', { a: 'x' })).toMatchObject({ isError: true });
    expect(await call(set, 'mcp__every__nope')).toMatchObject({ isError: true, text: expect.stringContaining('unknown MCP tool') });
  });

  it('a tool whose name is no valid function name gets a valid, stable alias and is called by its real name', async () => {
    const set = await open('tenant-a', [misbehaving('odd')]);
    const weird = set.tools.find((t) => t.name === 'weird.name/with spaces')!;
    expect(weird.alias).toMatch(/^mcp__odd__weird_name_with_spaces_[0-9a-f]{8}$/);
    expect(await call(set, weird.alias)).toMatchObject({ isError: false, text: 'weird tool called' });
  });

  it('reuses a cached client for the same tenant and spec, never across tenants', async () => {
    const spec = misbehaving('cached');
    const before = h.pool.stats().entries;
    const a1 = await open('tenant-a', [spec]);
    const first = (await call(a1, 'mcp__cached__instance')).text;
    await a1.release();
    expect(h.pool.stats()).toMatchObject({ entries: before + 1 });
    const a2 = await open('tenant-a', [spec]);
    expect((await call(a2, 'mcp__cached__instance')).text).toBe(first);
    expect(h.pool.stats().in_use).toBeGreaterThanOrEqual(1);
    const b = await open('tenant-b', [spec]);
    expect((await call(b, 'mcp__cached__instance')).text).not.toBe(first);
    expect(h.pool.stats().entries).toBe(before + 2);
  });

  it('a server that crashes mid-call: the call returns isError with the exit, the entry is evicted, the next call restarts it', async () => {
    const tag = randomUUID();
    const set = await open('tenant-a', [misbehaving('crashy', {}, tag)]);
    const first = (await call(set, 'mcp__crashy__instance')).text;
    const started = Date.now();
    const crashed = await call(set, 'mcp__crashy__crash');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(crashed.isError).toBe(true);
    expect(crashed.text).toMatch(/crashy/);
    expect(crashed.text).toMatch(/exited with code 3|Connection closed/);
    const again = await call(set, 'mcp__crashy__instance');
    expect(again).toMatchObject({ isError: false });
    expect(again.text).not.toBe(first);
  });

  it('a call that never answers is bounded by timeoutMs', async () => {
    const set = await open('tenant-a', [misbehaving('stuck')]);
    const started = Date.now();
    const r = await call(set, 'mcp__stuck__hang', {}, 1_000);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining('did not answer within 1000 ms') });
    // The server itself still answers pings: it stays usable.
    expect(await call(set, 'mcp__stuck__instance')).toMatchObject({ isError: false });
  });

  it('an aborted call rejects with the abort reason', async () => {
    const set = await open('tenant-a', [misbehaving('abortable')]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('run cancelled')), 200);
    await expect(set.call('mcp__abortable__hang', {}, { signal: ac.signal })).rejects.toThrow('run cancelled');
  });

  it('resolves $VAR references from the worker environment, passes literals, and gives the server a minimal environment', async () => {
    process.env.MCPTEST_SECRET_VALUE = 'resolved-secret-1234';
    const set = await open('tenant-a', [
      misbehaving('envy', { env: { FROM_VAR: '$MCPTEST_SECRET_VALUE', BRACED: '${MCPTEST_SECRET_VALUE}', LITERAL: 'literal-5678' } }),
    ]);
    expect((await call(set, 'mcp__envy__env', { name: 'FROM_VAR' })).text).toBe('resolved-secret-1234');
    expect((await call(set, 'mcp__envy__env', { name: 'BRACED' })).text).toBe('resolved-secret-1234');
    expect((await call(set, 'mcp__envy__env', { name: 'LITERAL' })).text).toBe('literal-5678');
    expect((await call(set, 'mcp__envy__env', { name: 'HOME' })).text).toBe(ws);
    const keys = (await call(set, 'mcp__envy__env-keys')).text.split(',');
    expect(keys).not.toContain('MCPTEST_SECRET_VALUE');
    expect(keys).not.toContain('TEST_DATABASE_URL');
    expect(keys).not.toContain('USER');
    expect(keys).toEqual(expect.arrayContaining(['PATH', 'HOME', 'FROM_VAR']));
  });

  it('a missing $VAR fails the session naming the variable; gateway settings cannot be referenced', async () => {
    delete process.env.MCPTEST_NOT_SET;
    await expect(open('tenant-a', [misbehaving('nokey', { env: { TOKEN: '$MCPTEST_NOT_SET' } })])).rejects.toThrow(
      /"nokey": env.TOKEN refers to \$MCPTEST_NOT_SET, which is not set/,
    );
    await expect(open('tenant-a', [misbehaving('sneaky', { env: { TOKEN: '$GATEWAY_AUTH_TOKEN' } })])).rejects.toThrow(/gateway setting/);
    // One bad server fails the whole open and holds nothing.
    const before = h.pool.stats();
    await expect(open('tenant-a', [misbehaving('fine'), misbehaving('bad', { env: { T: '$MCPTEST_NOT_SET' } })])).rejects.toThrow(/MCPTEST_NOT_SET/);
    expect(h.pool.stats().in_use).toBe(before.in_use);
  });

  it('a command that does not exist fails with a clear error', async () => {
    await expect(open('tenant-a', [{ name: 'ghost', command: 'definitely-not-a-command-xyz' }])).rejects.toThrow(/"ghost" did not start/);
  });

  it('server-filesystem lists the run workspace (and only sees it)', async () => {
    const dir = h.workspace();
    writeFileSync(join(dir, 'hello.txt'), 'hi');
    const set = await open('tenant-a', [{ name: 'fs', command: 'node', args: [FILESYSTEM, dir] }], dir);
    expect(set.tools.map((t) => t.alias)).toEqual(expect.arrayContaining(['mcp__fs__list_directory', 'mcp__fs__read_text_file']));
    const listing = await call(set, 'mcp__fs__list_directory', { path: dir });
    expect(listing).toMatchObject({ isError: false, text: expect.stringContaining('hello.txt') });
    expect(await call(set, 'mcp__fs__read_text_file', { path: join(dir, 'hello.txt') })).toMatchObject({ text: 'hi' });
    expect(await call(set, 'mcp__fs__read_text_file', { path: '/etc/hostname-outside' })).toMatchObject({ isError: true });
  });

  it('server-everything over Streamable HTTP through the outbound policy, with headers', async () => {
    const srv = await startEverythingHttp();
    try {
      process.env.MCPTEST_HEADER_VALUE = 'header-secret';
      const set = await open('tenant-a', [{ name: 'remote', url: srv.url, headers: { 'X-Token': '$MCPTEST_HEADER_VALUE' } }]);
      expect(set.tools.map((t) => t.alias)).toEqual(expect.arrayContaining(['mcp__remote__echo', 'mcp__remote__get-sum']));
      expect(await call(set, 'mcp__remote__echo', { message: 'over http' })).toMatchObject({ isError: false, text: expect.stringContaining('over http') });
      expect(await call(set, 'mcp__remote__get-sum', { a: 1, b: 2 })).toMatchObject({ text: expect.stringContaining('3') });
      // Reused from the cache on a second open.
      const entries = h.pool.stats().entries;
      const again = await open('tenant-a', [{ name: 'remote', url: srv.url, headers: { 'X-Token': '$MCPTEST_HEADER_VALUE' } }]);
      expect(h.pool.stats().entries).toBe(entries);
      // The server goes away: the call is a tool error, not a hang.
      await srv.stop();
      const r = await call(again, 'mcp__remote__echo', { message: 'gone' }, 5_000);
      expect(r.isError).toBe(true);
    } finally {
      await srv.stop();
    }
  });

  it('the probe lists tools uncached and bounds a server that never answers', async () => {
    const before = h.pool.stats().entries;
    const tools = await h.pool.probe({ name: 'probe', command: 'node', args: [EVERYTHING, 'stdio'] }, { workspace: h.workspace(), signal: signal() }, 10_000);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(h.pool.stats().entries).toBe(before);
    const tag = randomUUID();
    const started = Date.now();
    await expect(
      h.pool.probe({ name: 'probe', command: 'node', args: [MISBEHAVING, 'silent', `--tag=${tag}`] }, { workspace: h.workspace(), signal: signal() }, 1_500),
    ).rejects.toThrow(/"probe"/);
    expect(Date.now() - started).toBeLessThan(6_000);
    await waitFor(() => processesMatching(tag) === 0, { what: 'the unanswering probe server to be killed' });
    expect(processesMatching(tag)).toBe(0);
  });
});

describe('McpClientPool cache bounds and lifecycle', () => {
  it('evicts the least recently used idle entry at the cap (killing it), runs over the cap when all are held, kills everything on destroy', async () => {
    const h = openPool({ GATEWAY_TASK_MCP_CLIENT_CACHE_MAX_ENTRIES: '1' });
    const ws = h.workspace();
    const ctx = { workspace: ws, signal: new AbortController().signal };
    const [tagA, tagB] = [randomUUID(), randomUUID()];
    const a = { name: 'a', command: 'node', args: [MISBEHAVING, `--tag=${tagA}`] };
    const b = { name: 'b', command: 'node', args: [MISBEHAVING, `--tag=${tagB}`] };
    try {
      const setA = await h.pool.open('t', [a], ctx);
      await setA.release();
      const setB = await h.pool.open('t', [b], ctx);
      expect(h.pool.stats()).toEqual({ entries: 1, in_use: 1, idle: 0 });
      await waitFor(() => processesMatching(tagA) === 0, { what: "the evicted entry's server to be killed" });
      expect(processesMatching(tagA)).toBe(0);
      const setA2 = await h.pool.open('t', [a], ctx);
      expect(h.pool.stats()).toEqual({ entries: 2, in_use: 2, idle: 0 });
      await setA2.release();
      expect(h.pool.stats()).toEqual({ entries: 1, in_use: 1, idle: 0 });
      await setB.release();
      expect(processesMatching(tagB)).toBeGreaterThan(0);
    } finally {
      await h.close();
    }
    expect(h.pool.stats().entries).toBe(0);
    expect(processesMatching(tagB)).toBe(0);
  });

  it('pings idle entries and evicts a server that stopped answering', async () => {
    const h = openPool({ GATEWAY_TASK_MCP_CLIENT_CACHE_PING_INTERVAL: '200ms', GATEWAY_TASK_MCP_CLIENT_CACHE_PING_TIMEOUT: '300ms' });
    try {
      const tag = randomUUID();
      const set = await h.pool.open('t', [{ name: 'w', command: 'node', args: [MISBEHAVING, `--tag=${tag}`] }], {
        workspace: h.workspace(),
        signal: new AbortController().signal,
      });
      await set.release();
      expect(h.pool.stats().entries).toBe(1);
      // Freeze the server: it no longer answers pings.
      const pids = execFileSync('pgrep', ['-f', `node .*${tag}`], { encoding: 'utf8' })
        .trim()
        .split('\n');
      for (const pid of pids) {
        process.kill(Number(pid), 'SIGSTOP');
      }
      await waitFor(() => h.pool.stats().entries === 0, { what: "the frozen server's entry to be dropped" });
      expect(h.pool.stats().entries).toBe(0);
      await waitFor(() => processesMatching(tag) === 0, { what: 'the frozen server to be killed' });
      expect(processesMatching(tag)).toBe(0);
    } finally {
      await h.close();
    }
  });

  it('refuses a private HTTP server unless the outbound policy allows it', async () => {
    const h = openPool({ GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: 'false' });
    try {
      await expect(
        h.pool.open('t', [{ name: 'local', url: 'http://127.0.0.1:9/mcp' }], {
          workspace: h.workspace(),
          signal: new AbortController().signal,
        }),
      ).rejects.toThrow(/"local".*private or loopback/);
    } finally {
      await h.close();
    }
  });
});
