import { createHash, randomBytes } from 'node:crypto';
import { rowsHolding as rowsIn, type ScratchDatabase, sql } from '../../support/infra';
import { HOSTILE, MCP_SANDBOX_READ_PATHS } from '../../support/mcp-servers';
import { Client, Json, Processes, scaledEnv } from '../tasks/tasks-harness';
import { createKey, OPERATOR_TOKEN, providerEnv, startFakeUpstream, type FakeUpstream } from './security-harness';

/**
 * Literal MCP `env`/`headers` values are secrets: stored sealed with GATEWAY_SECRET_KEY like provider keys,
 * so no row of the database holds them, while the server they belong to still gets them. Real Postgres (queried
 * directly), one scaled process (api and worker), the real sandbox and a hand-written stdio MCP server.
 */
describe('MCP literal secrets at rest (scaled, real Postgres)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let db: ScratchDatabase;
  let t: Client;
  let env: Record<string, string>;

  const LITERAL_ENV = `literal-env-${randomBytes(6).toString('hex')}`;
  const LITERAL_HEADER = `literal-header-${randomBytes(6).toString('hex')}`;
  /** A literal that looks like the stored form: it must come back exactly as given. */
  const LOOKALIKE = `hecate-sealed:v1:${randomBytes(9).toString('base64')}`;
  const sha = (s: string) => createHash('sha256').update(s).digest('hex');

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    const s = await scaledEnv({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_AUTH_TOKEN: OPERATOR_TOKEN,
      GATEWAY_SECRET_KEY: randomBytes(32).toString('base64'),
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_SANDBOX_READ_PATHS: MCP_SANDBOX_READ_PATHS,
      GATEWAY_MCP_STDIO_ALLOW: JSON.stringify([{ command: process.execPath, args: HOSTILE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') }]),
    });
    db = s.db;
    env = s.env;
    const all = await procs.start('all', s.env);
    t = new Client(all.url, (await createKey(all.url, ['operator'], 'acme')).secret);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
    await db?.drop();
  });

  const rowsHolding = (needle: string): Promise<string[]> => rowsIn(db.url, needle);

  it('stores literal env and header values sealed (no table holds them) and the server still gets them', async () => {
    upstream.script({
      toolCalls: [
        { name: 'mcp__h__env-sha256', arguments: { name: 'API_TOKEN' } },
        { name: 'mcp__h__env-sha256', arguments: { name: 'LOOKALIKE' } },
      ],
    });
    upstream.script({ content: 'done' });
    const { taskId, runId } = await t.startTask({
      execution_kind: 'agent_loop',
      requested_model: 'gpt-4o-mini',
      prompt: 'check the token',
      mcp_servers: [
        { name: 'h', command: process.execPath, args: [HOSTILE], env: { API_TOKEN: LITERAL_ENV, LOOKALIKE, REF: '$HECATE_MCP_SECRET_NONE_SET_X' } },
      ],
    });
    // `$HECATE_MCP_SECRET_NONE_SET_X` is not set: the run fails naming it; drop it and the server starts.
    const failed = await t.waitStatus(taskId, runId, ['completed', 'failed'], 60_000);
    expect(failed).toMatchObject({ status: 'failed', error_kind: 'mcp_unavailable' });
    expect(failed.last_error).toMatch(/env.REF refers to \$HECATE_MCP_SECRET_NONE_SET_X, which is not set/);

    const second = await t.startTask({
      execution_kind: 'agent_loop',
      requested_model: 'gpt-4o-mini',
      prompt: 'check the token',
      mcp_servers: [{ name: 'h', command: process.execPath, args: [HOSTILE], env: { API_TOKEN: LITERAL_ENV, LOOKALIKE } }],
    });
    const run = await t.waitStatus(second.taskId, second.runId, ['completed', 'failed'], 60_000);
    expect(run.status).toBe('completed');
    const chats = upstream.requests.filter((r) => r.path === '/v1/chat/completions');
    const replies = ((chats.at(-1)!.body as Json).messages as Json[]).filter((m) => m.role === 'tool').map((m) => m.content);
    expect(replies).toEqual([sha(LITERAL_ENV), sha(LOOKALIKE)]);

    // A Streamable HTTP server's literal header, stored the same way (created, not started).
    const httpTask = await t.createTask({
      execution_kind: 'agent_loop',
      requested_model: 'gpt-4o-mini',
      prompt: 'x',
      mcp_servers: [{ name: 'remote', url: 'https://mcp.example.com/mcp', headers: { Authorization: `Bearer ${LITERAL_HEADER}` } }],
    });
    expect(JSON.stringify(httpTask)).not.toContain(LITERAL_HEADER);

    for (const literal of [LITERAL_ENV, LITERAL_HEADER, LOOKALIKE]) expect({ literal, rows: await rowsHolding(literal) }).toEqual({ literal, rows: [] });
    // What is stored instead: the sealed form, `$VAR` references as they were.
    const [row] = await sql<{ mcp_servers: Json[] }>(db.url, `SELECT mcp_servers FROM tasks WHERE id = $1`, [taskId]);
    expect(row.mcp_servers[0].env.API_TOKEN).toMatch(/^hecate-sealed:v1:/);
    expect(row.mcp_servers[0].env.REF).toBe('$HECATE_MCP_SECRET_NONE_SET_X');
  }, 120_000);

  it('an api without GATEWAY_SECRET_KEY refuses to store a literal (409), stores nothing, and still takes $VAR references', async () => {
    const { GATEWAY_SECRET_KEY: _key, ...keyless } = env;
    void _key;
    const api = await procs.start('api', keyless);
    const c = new Client(api.url, OPERATOR_TOKEN);
    const literal = `literal-keyless-${randomBytes(6).toString('hex')}`;
    const entry = { name: 'h', command: process.execPath, args: [HOSTILE] };
    const refused = await c.call('POST', '/hecate/v1/tasks', { execution_kind: 'agent_loop', prompt: 'x', mcp_servers: [{ ...entry, env: { T: literal } }] });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/GATEWAY_SECRET_KEY is not set/);
    expect(refused.text).not.toContain(literal);
    expect(await rowsHolding(literal)).toEqual([]);
    const byRef = await c.call('POST', '/hecate/v1/tasks', {
      execution_kind: 'agent_loop',
      prompt: 'x',
      mcp_servers: [{ ...entry, env: { T: '$HECATE_MCP_SECRET_T' } }],
    });
    expect(byRef.status).toBe(200);
  }, 60_000);
});
