import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from '../../support/fake-upstream/fake-upstream.js';
import type { Loose } from '../../support/http';
import { waitFor } from '../../support/infra';
import { NdjsonReader } from '../../support/ndjson';
import { providerEnv } from '../../support/provider-env';
import { settle } from '../../support/sdk';
import type { ServerProcess } from '../../support/server-process';
import { Client, embeddedTasksEnv, Json, Processes, TOKEN } from '../tasks/tasks-harness';

const OPTIMIZE = '/hecate/v1/agent-chat/optimize-input';
const STREAM = '/hecate/v1/agent-chat/optimize-input/stream';
const MARKER = 'Hecate input optimisation';

/**
 * docs/api.md §5 input optimisation on the built server against the fake upstream: the structured answer and the NDJSON
 * stream (read line by line), what the model received, the usage ledger, the API contract's error envelopes (validation, size,
 * model, budget, rate limit, an upstream failure before and after the first line), a client leaving mid-stream
 * (the upstream request is cancelled), and tenant keys.
 */
describe('agent chat: input optimisation (embedded)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let server: ServerProcess;
  let limited: ServerProcess;
  let c: Client;

  const optimize = (client: Client, body: Json, headers: Record<string, string> = {}) =>
    settle(client.api.request('post', OPTIMIZE, { body: body as never, headers }));
  const stream = (base: string, body: Json, token: string | null = TOKEN, headers: Record<string, string> = {}) =>
    NdjsonReader.post(`${base}${STREAM}`, body, { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers });
  const completions = (): RecordedRequest[] => upstream.requests.filter((r) => r.path === '/v1/chat/completions');
  const usageRows = (client: Client, requestId: string) =>
    waitFor(
      async () => {
        const rows = await client.ok<Loose[]>('GET', `/hecate/v1/usage/events?request_id=${requestId}`);
        return rows.length > 0 ? rows : undefined;
      },
      { what: `the usage row of ${requestId}` },
    );
  const newKey = async (client: Client, scopes: string[], tenant: string) => {
    const key = await client.ok('POST', '/hecate/v1/api-keys', { name: `opt-${tenant}`, scopes, tenant_id: tenant });
    return { id: key.id as string, secret: key.secret as string, client: new Client(client.url, key.secret as string) };
  };

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini', 'opt-model'] });
    const fake = providerEnv('fake', upstream, { kind: 'local' });
    [server, limited] = await Promise.all([
      procs.start('all', embeddedTasksEnv({ ...fake, GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL: 'opt-model', GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES: '4096' })),
      // No default optimiser model; a bucket of 2 model calls per key that refills once a minute.
      procs.start('all', embeddedTasksEnv({ ...fake, GATEWAY_RATE_LIMIT_ENABLED: 'true', GATEWAY_RATE_LIMIT_RPM: '1', GATEWAY_RATE_LIMIT_BURST: '2' })),
    ]);
    c = new Client(server.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  it('rewrites a draft: the model got the optimiser instruction, the instructions and the draft; the answer and the usage row say what it cost', async () => {
    upstream.script({ content: '  Find the failing tests under src/ and fix the first one.  ', usage: { input: 40, output: 12 } });
    const rid = `opt-sync-${Date.now()}`;
    const r = await optimize(c, { current_input: 'fix tests pls', instructions: 'mention src/' }, { 'x-request-id': rid });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      object: 'optimized_input',
      data: {
        success: true,
        optimized_input: 'Find the failing tests under src/ and fix the first one.',
        request_id: rid,
        provider: 'fake',
        model: 'opt-model',
        route_reason: expect.any(String),
        stop_reason: 'end_turn',
        usage: { input_tokens: 40, output_tokens: 12, cached_input_tokens: 0 },
        cost_micros_usd: 0,
        cost_usd: expect.any(String),
      },
    });

    const [call] = completions();
    expect(completions()).toHaveLength(1);
    expect(call.body).toMatchObject({ model: 'opt-model', stream: false });
    const messages = call.body!.messages!;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[0].content).toContain(MARKER);
    expect(messages[0].content).toContain('mention src/');
    expect(messages[1].content).toContain('fix tests pls');

    expect(await usageRows(c, rid)).toEqual([
      expect.objectContaining({
        request_id: rid,
        endpoint: OPTIMIZE,
        provider: 'fake',
        model: 'opt-model',
        status: 'ok',
        stream: false,
        input_tokens: 40,
        output_tokens: 12,
      }),
    ]);
  });

  it('streams the rewrite as text/plain, one JSON object per line: start, deltas, done; the usage row is the stream’s', async () => {
    upstream.script({ content: 'Add a unit test for the parser.', chunks: 4, usage: { input: 30, output: 8 } });
    const rid = `opt-stream-${Date.now()}`;
    const s = await stream(server.url, { input: 'test parser', model: 'gpt-4o-mini' }, TOKEN, { 'x-request-id': rid });
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('text/plain; charset=utf-8');

    const first = await s.next();
    expect(first).toEqual({ type: 'start', request_id: rid, provider: 'fake', model: 'gpt-4o-mini', timestamp: expect.any(Number) });
    const lines = await s.rest();
    const deltas = lines.filter((l) => l.type === 'delta');
    expect(lines.map((l) => l.type)).toEqual(['start', ...deltas.map(() => 'delta'), 'done']);
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.map((d) => d.content).join('')).toBe('Add a unit test for the parser.');
    expect(lines.at(-1)).toMatchObject({
      type: 'done',
      success: true,
      optimized_input: 'Add a unit test for the parser.',
      request_id: rid,
      provider: 'fake',
      model: 'gpt-4o-mini',
      usage: { input_tokens: 30, output_tokens: 8, cached_input_tokens: 0 },
    });

    const [call] = completions();
    expect(call.body).toMatchObject({ model: 'gpt-4o-mini', stream: true });
    expect(call.body!.messages![0].content).toContain(MARKER);
    expect(call.body!.messages!.at(-1)!.content).toContain('test parser');
    expect(await usageRows(c, rid)).toEqual([
      expect.objectContaining({ request_id: rid, endpoint: STREAM, status: 'ok', stream: true, input_tokens: 30, output_tokens: 8 }),
    ]);
  });

  it("takes the context from the caller's Agent Chat session (or from history_messages); another tenant's session is 404", async () => {
    const session = await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' });
    upstream.script({ content: 'The build uses esbuild.' });
    const turn = await c.call('POST', `/hecate/v1/agent-chat/sessions/${session.id}/messages`, { content: 'What does the build use?' });
    expect(turn.status).toBe(200);

    upstream.script({ content: 'Switch the build from esbuild to tsc and keep the output folder.' });
    const r = await optimize(c, { current_input: 'switch it to tsc', session_id: session.id });
    expect(r.status).toBe(200);
    const user = completions().at(-1)!.body!.messages!.at(-1)!.content as string;
    expect(user).toContain('[user] What does the build use?');
    expect(user).toContain('[assistant] The build uses esbuild.');
    expect(user.indexOf('esbuild')).toBeLessThan(user.indexOf('switch it to tsc'));

    upstream.script({ content: 'ok' });
    const given = await optimize(c, {
      current_input: 'and the docs',
      history_messages: [{ role: 'user', content: 'we moved to Vite' }],
      session_id: session.id,
    });
    expect(given.status).toBe(200);
    const user2 = completions().at(-1)!.body!.messages!.at(-1)!.content as string;
    expect(user2).toContain('[user] we moved to Vite');
    expect(user2).not.toContain('esbuild');

    const other = await newKey(c, ['operator'], 'globex');
    const foreign = await optimize(other.client, { current_input: 'switch it', session_id: session.id });
    expect({ status: foreign.status, type: foreign.body.error?.type }).toEqual({ status: 404, type: 'not_found' });
  });

  it('refuses bad drafts with the seed envelope before any model call: empty 400, both names 400, over the cap 413, no model 400, unknown model 422', async () => {
    const refused = async (client: Client, body: Json) => {
      const r = await optimize(client, body);
      return [r.status, r.body.error?.type];
    };
    expect(await refused(c, { current_input: '' })).toEqual([400, 'invalid_request']);
    expect(await refused(c, { current_input: '   \n' })).toEqual([400, 'invalid_request']);
    expect(await refused(c, {})).toEqual([400, 'invalid_request']);
    expect(await refused(c, { current_input: 'a', input: 'b' })).toEqual([400, 'invalid_request']);
    expect(await refused(c, { current_input: 'a', agent_id: 'x' })).toEqual([400, 'invalid_request']);
    expect(await refused(c, { current_input: 'x'.repeat(5000) })).toEqual([413, 'payload_too_large']);
    expect(await refused(c, { current_input: 'ok', instructions: 'y'.repeat(5000) })).toEqual([413, 'payload_too_large']);
    expect(await refused(c, { current_input: 'hi', model: 'no-such-model' })).toEqual([422, 'model_not_configured']);
    const session404 = await optimize(c, { current_input: 'hi', session_id: 'agent_chat_missing' });
    expect(session404.status).toBe(404);

    // Without the operator's default model the request must name one; the answer names both ways.
    const noModel = await optimize(new Client(limited.url), { current_input: 'hi' });
    expect(noModel.status).toBe(400);
    expect(noModel.body.error).toMatchObject({ type: 'agent_chat.model_required', field: 'model', variable: 'GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL' });
    expect(noModel.body.error.message).toContain('GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL');

    // The stream refuses the same way: a JSON envelope with the status, no line.
    const s = await stream(server.url, { current_input: '' });
    expect(s.status).toBe(400);
    expect(s.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(await s.text()).error.type).toBe('invalid_request');
    const big = await stream(server.url, { input: 'x'.repeat(5000) });
    expect(big.status).toBe(413);
    expect(JSON.parse(await big.text()).error.type).toBe('payload_too_large');

    expect(completions()).toHaveLength(0);
  });

  it('a budget the model cannot fit is 402 budget_exceeded; an upstream failure is the envelope before the first line and an error line after it', async () => {
    // 1 micro-USD per output token: the worst case of a call without max_tokens is 4096 micro-USD.
    await c.ok('PUT', '/hecate/v1/settings/pricing/fake/opt-model', {
      input_micros_usd_per_million_tokens: 1_000_000,
      output_micros_usd_per_million_tokens: 1_000_000,
    });
    try {
      const r = await optimize(c, { current_input: 'spend', budget_micros_usd: 100 });
      expect(r.status).toBe(402);
      expect(r.body.error).toMatchObject({
        type: 'budget_exceeded',
        cost_cap_micros_usd: 100,
        worst_case_micros_usd: 4096,
        provider: 'fake',
        model: 'opt-model',
      });
      const s = await stream(server.url, { current_input: 'spend', budget_micros_usd: 100 });
      expect(s.status).toBe(402);
      expect(JSON.parse(await s.text()).error.type).toBe('budget_exceeded');
      expect(completions()).toHaveLength(0);

      // Within the budget (max_tokens bounds the worst case), the call is made and priced.
      upstream.script({ content: 'Spend wisely.', usage: { input: 10, output: 5 } });
      const ok = await optimize(c, { current_input: 'spend', budget_micros_usd: 100, max_tokens: 50 });
      expect(ok.status).toBe(200);
      expect(ok.body.data).toMatchObject({ optimized_input: 'Spend wisely.', cost_micros_usd: 15 });
      expect(completions().at(-1)!.body).toMatchObject({ max_tokens: 50 });
    } finally {
      await c.ok('DELETE', '/hecate/v1/settings/pricing/fake/opt-model');
    }

    upstream.script({ status: 400, errorBody: { error: { message: 'bad prompt', type: 'invalid_request_error' } } });
    const before = await stream(server.url, { current_input: 'fail early' });
    expect(before.status).toBe(400);
    expect(JSON.parse(await before.text()).error).toMatchObject({ type: 'invalid_request', request_id: expect.any(String) });

    upstream.script({ content: 'one two three four five six', chunks: 6, errorAfterChunks: 2 });
    const after = await stream(server.url, { current_input: 'fail late' });
    expect(after.status).toBe(200);
    const lines = await after.rest();
    expect(lines.map((l) => l.type)).toEqual(['start', 'delta', 'delta', 'error']);
    expect(lines[3].error).toMatchObject({ type: 'upstream_error', request_id: lines[0].request_id, user_message: expect.any(String) });
  });

  it('spends the caller’s rate-limit bucket like a /v1 completion: 429 rate_limit_exceeded with Retry-After once it is empty', async () => {
    const tenant = await newKey(new Client(limited.url), ['operator'], 'acme');
    upstream.script({ content: 'one', times: 2 });
    const first = await optimize(tenant.client, { current_input: 'a', model: 'gpt-4o-mini' });
    expect(first.status).toBe(200);
    const second = await stream(limited.url, { current_input: 'b', model: 'gpt-4o-mini' }, tenant.secret);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-limit')).toBe('1');
    expect((await second.rest()).at(-1).type).toBe('done');

    const third = await tenant.client.call('POST', OPTIMIZE, { current_input: 'c', model: 'gpt-4o-mini' });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ type: 'rate_limit_exceeded' });
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    const fourth = await stream(limited.url, { current_input: 'd', model: 'gpt-4o-mini' }, tenant.secret);
    expect(fourth.status).toBe(429);
    expect(JSON.parse(await fourth.text()).error.type).toBe('rate_limit_exceeded');
    expect(completions()).toHaveLength(2);

    // The bucket is the key's: another key of the same tenant still has its own.
    const other = await newKey(new Client(limited.url), ['operator'], 'acme');
    upstream.script({ content: 'fine' });
    expect((await optimize(other.client, { current_input: 'e', model: 'gpt-4o-mini' })).status).toBe(200);
  });

  it('a client that leaves cancels the upstream request: mid-stream (the model stalled too), and before the structured answer', async () => {
    // Two deltas, then the upstream stalls: nothing more to write, so only the client's leaving can end the call.
    upstream.script({ content: 'word '.repeat(20), chunks: 20, hangAfterChunks: 2 });
    const s = await stream(server.url, { current_input: 'write a long prompt' });
    expect(s.status).toBe(200);
    expect((await s.next()).type).toBe('start');
    expect((await s.next()).type).toBe('delta');
    const [call] = await upstream.waitForRequests(1);
    expect(call.aborted).toBe(false);
    s.close();
    await upstream.waitFor((u) => u.requests[0]?.aborted === true, 10_000);
    expect(upstream.activeRequests).toBe(0);

    // The structured form too: a client that gives up before the rewrite is ready cancels the call.
    upstream.script({ hang: true });
    const gaveUp = new AbortController();
    const pending = fetch(`${server.url}${OPTIMIZE}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ current_input: 'never answered' }),
      signal: gaveUp.signal,
    }).catch((err: Error) => err.name);
    await upstream.waitForRequests(2);
    expect(upstream.requests[1].aborted).toBe(false);
    gaveUp.abort();
    expect(await pending).toBe('AbortError');
    await upstream.waitFor((u) => u.requests[1]?.aborted === true, 10_000);
  });

  it('tenant keys: none is 401, inference-only is 403, an operator key optimises and its usage row is its tenant’s alone', async () => {
    expect((await stream(server.url, { current_input: 'x' }, null)).status).toBe(401);
    const anonymous = await new Client(server.url, '').call('POST', OPTIMIZE, { current_input: 'x' });
    expect(anonymous.status).toBe(401);
    const inferenceOnly = await newKey(c, ['inference'], 'initech');
    const forbidden = await optimize(inferenceOnly.client, { current_input: 'x' });
    expect({ status: forbidden.status, type: forbidden.body.error?.type }).toEqual({ status: 403, type: 'forbidden' });
    expect(completions()).toHaveLength(0);

    const initech = await newKey(c, ['operator'], 'initech');
    upstream.script({ content: 'Tenant rewrite.' });
    const rid = `opt-tenant-${Date.now()}`;
    const r = await optimize(initech.client, { current_input: 'x' }, { 'x-request-id': rid });
    expect(r.status).toBe(200);
    expect(await usageRows(initech.client, rid)).toEqual([expect.objectContaining({ tenant_id: 'initech', api_key_id: initech.id, endpoint: OPTIMIZE })]);
    const globex = await newKey(c, ['operator'], 'globex2');
    expect(await globex.client.ok('GET', `/hecate/v1/usage/events?request_id=${rid}`)).toEqual([]);
  });
});
