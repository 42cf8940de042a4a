import { scaledStackEnv } from '../../support/harness';
import OpenAI from 'openai';
import type { GatewayTrace } from '@modules/inference/usage/trace-store.service';
import { ScratchDatabase, waitFor } from '../../support/infra';
import { ServerProcess, startServer } from '../../support/server-process';
import { api, fakeUpstream, FakeUpstream, OPERATOR_TOKEN, post, providerEnv, sseFrames, startGateway } from './gateway-harness';

type ChatBody = { error: { type: string; message: string; [k: string]: unknown } };
type Status = {
  name: string;
  routing_ready: boolean;
  routing_blocked_reason?: string;
  readiness_checks: Array<{ name: string; status: string; reason: string }>;
};

describe('routing: retries, failover, circuit breaker, timeouts', () => {
  let server: ServerProcess;
  const upstreams: FakeUpstream[] = [];

  beforeAll(async () => {
    server = await startGateway({
      GATEWAY_PROVIDER_MAX_ATTEMPTS: '2',
      GATEWAY_PROVIDER_RETRY_BACKOFF: '20ms',
      GATEWAY_PROVIDER_HEALTH_FAILURE_THRESHOLD: '3',
      GATEWAY_PROVIDER_COOLDOWN: '1500ms',
      GATEWAY_UPSTREAM_FIRST_BYTE_TIMEOUT: '600ms',
      GATEWAY_UPSTREAM_IDLE_TIMEOUT: '600ms',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all(upstreams.map((u) => u.close()));
  });

  /** Two fresh upstreams (a, b) serving `model`, registered as providers `<tag>_a` and `<tag>_b` (a sorts first). */
  async function pair(tag: string, model: string) {
    const a = await fakeUpstream({ models: [model] });
    const b = await fakeUpstream({ models: [model] });
    upstreams.push(a, b);
    for (const [suffix, up] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const res = await post(server.url, '/hecate/v1/settings/providers', { custom_name: `${tag}_${suffix}`, base_url: `${up.url}/v1`, kind: 'local' });
      expect(res.status).toBe(201);
    }
    return { a, b };
  }

  const chat = (model: string, extra: Record<string, unknown> = {}) =>
    post<ChatBody>(server.url, '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'ping' }], ...extra });
  const posts = (u: FakeUpstream) => u.requests.filter((r) => r.method === 'POST').length;
  const trace = async (requestId: string) => (await api<{ data: GatewayTrace }>(server.url, `/hecate/v1/traces?request_id=${requestId}`)).body.data;
  const status = async (name: string) => (await api<{ data: Status[] }>(server.url, '/hecate/v1/providers/status')).body.data.find((s) => s.name === name)!;

  it('retries a 500 on the same provider, then fails over to the next one', async () => {
    const { a, b } = await pair('fo500', 'm-fo500');
    a.script({ status: 500, times: 2 });
    const res = await chat('m-fo500');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-runtime-provider')).toBe('fo500_b');
    expect(res.headers.get('x-runtime-attempts')).toBe('3');
    expect(posts(a)).toBe(2);
    expect(posts(b)).toBe(1);
    const t = await trace(res.headers.get('x-request-id')!);
    expect(t.route).toMatchObject({ reason: 'requested_model', failover: true, fallback_from: 'fo500_a', selected_provider: 'fo500_b' });
    expect(t.route.candidates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ provider: 'fo500_a', status: 'failed' }),
        expect.objectContaining({ provider: 'fo500_b', status: 'selected' }),
      ]),
    );
    expect(t.attempts.map((x) => [x.provider, x.status, x.upstream_status])).toEqual([
      ['fo500_a', 'error', 500],
      ['fo500_a', 'error', 500],
      ['fo500_b', 'ok', undefined],
    ]);
    const ledger = await api<{ data: Array<{ provider: string; status: string; attempt: number }> }>(
      server.url,
      `/hecate/v1/usage/events?request_id=${res.headers.get('x-request-id')}`,
    );
    expect(ledger.body.data.map((r) => [r.provider, r.status, r.attempt]).sort((x, y) => (x[2] as number) - (y[2] as number))).toEqual([
      ['fo500_a', 'error', 1],
      ['fo500_a', 'error', 2],
      ['fo500_b', 'ok', 3],
    ]);
  });

  it('fails over when the upstream never answers (first-byte timeout)', async () => {
    const { a, b } = await pair('fohang', 'm-fohang');
    a.script({ hang: true, times: 2 });
    const res = await chat('m-fohang');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-runtime-provider')).toBe('fohang_b');
    expect(posts(a)).toBe(2);
    expect(posts(b)).toBe(1);
    const t = await trace(res.headers.get('x-request-id')!);
    expect(t.attempts[0]).toMatchObject({ provider: 'fohang_a', status: 'error', error_type: 'timeout', retryable: true });
  });

  it('fails over a stream whose upstream hangs before the first byte', async () => {
    const { a } = await pair('fostream', 'm-fostream');
    a.script({ hang: true, times: 2 });
    const res = await chat('m-fostream', { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-runtime-provider')).toBe('fostream_b');
    expect(String(res.body).trim().endsWith('data: [DONE]')).toBe(true);
  });

  it('ends a stream whose upstream goes idle mid-stream with an error frame (never a hung client)', async () => {
    const { a } = await pair('idle', 'm-idle');
    a.script({ content: 'a b c d e f', chunks: 6, hangAfterChunks: 2 });
    const res = await chat('m-idle', { stream: true, provider: 'idle_a' });
    expect(res.status).toBe(200);
    const frames = sseFrames(String(res.body));
    const last = frames[frames.length - 1].data as { error?: { code: string } };
    expect(last.error).toMatchObject({ code: 'upstream_timeout' });
    expect(String(res.body)).not.toContain('[DONE]');
    const t = await trace(res.headers.get('x-request-id')!);
    expect(t.status).toBe('error');
  });

  it('ends a stream whose upstream drops the connection with an error frame', async () => {
    const { a } = await pair('drop', 'm-drop');
    a.script({ content: 'a b c d e f', chunks: 6, dropAfterChunks: 2 });
    const res = await post<string>(server.url, '/v1/messages', {
      model: 'm-drop',
      max_tokens: 10,
      stream: true,
      provider: 'drop_a',
      messages: [{ role: 'user', content: 'x' }],
    });
    const frames = sseFrames(res.body);
    expect(frames[0].event).toBe('message_start');
    expect(frames[frames.length - 1]).toMatchObject({ event: 'error', data: { type: 'error', error: { type: 'api_error' } } });
  });

  it('does not fail over a pinned provider', async () => {
    const { a, b } = await pair('pin', 'm-pin');
    a.script({ status: 503, times: Infinity });
    const res = await chat('m-pin', { provider: 'pin_a' });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ type: 'upstream_error', provider: 'pin_a', attempts: 2 });
    expect(posts(a)).toBe(2);
    expect(posts(b)).toBe(0);
  });

  it('retries only retryable failures: a 400 is returned at once, a 429 moves on without retrying', async () => {
    const { a, b } = await pair('retry', 'm-retry');
    a.script({ status: 400, errorBody: { error: { message: 'bad field', type: 'invalid_request_error' } } });
    const bad = await chat('m-retry');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request' });
    expect(bad.body.error.message).toContain('bad field');
    expect(posts(a)).toBe(1);
    expect(posts(b)).toBe(0);
    a.script({ status: 429, headers: { 'retry-after': '1' } });
    const limited = await chat('m-retry');
    expect(limited.status).toBe(200);
    expect(limited.headers.get('x-runtime-provider')).toBe('retry_b');
    expect(posts(a)).toBe(2);
    expect((await status('retry_a')).routing_blocked_reason).toBe('provider_rate_limited');
  });

  it('opens the circuit after consecutive failures, skips the provider, then recovers through a half-open probe', async () => {
    const up = await fakeUpstream({ models: ['m-circuit'] });
    upstreams.push(up);
    expect((await post(server.url, '/hecate/v1/settings/providers', { custom_name: 'circuit', base_url: `${up.url}/v1`, kind: 'local' })).status).toBe(201);
    up.script({ status: 500, times: Infinity });
    expect((await chat('m-circuit')).status).toBe(502); // failures 1-2
    expect((await chat('m-circuit')).status).toBe(502); // failure 3 opens the circuit; no further retry
    expect(posts(up)).toBe(3);
    const skipped = await chat('m-circuit');
    expect(skipped.status).toBe(503);
    expect(skipped.body.error).toMatchObject({ type: 'route_impossible', candidates: [{ provider: 'circuit', skip_reason: 'circuit_open' }] });
    expect(posts(up)).toBe(3);
    const open = await status('circuit');
    expect(open.routing_ready).toBe(false);
    expect(open.readiness_checks.find((c) => c.name === 'health')).toMatchObject({ status: 'blocked', reason: 'circuit_open' });

    up.reset();
    await waitFor(async () => (await status('circuit')).readiness_checks.find((c) => c.name === 'health')?.reason === 'half_open', {
      timeoutMs: 10_000,
      what: 'half-open',
    });
    const ok = await chat('m-circuit');
    expect(ok.status).toBe(200);
    const healthy = await status('circuit');
    expect(healthy.routing_ready).toBe(true);
    expect(healthy.readiness_checks.find((c) => c.name === 'health')).toMatchObject({ status: 'ok', reason: 'healthy' });
  });
});

describe('rate limit shared by two api processes (scaled mode)', () => {
  let db: ScratchDatabase;
  let up: FakeUpstream;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    up = await fakeUpstream({ models: ['m-rl'] });
    let env: Record<string, string>;
    ({ env, db } = await scaledStackEnv({
      token: OPERATOR_TOKEN,
      migrateOnBoot: true,
      env: { GATEWAY_RATE_LIMIT_RPM: '3', ...providerEnv('rl', up, { kind: 'local' }) },
    }));
    servers.push(...(await Promise.all([startServer('api', env), startServer('api', env)])));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await up?.close();
    await db?.drop();
  });

  it('shares one bucket per credential across processes and answers 429 with headers', async () => {
    const clients = servers.map((s) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: OPERATOR_TOKEN, maxRetries: 0 }));
    const remaining: string[] = [];
    for (const i of [0, 1, 0]) {
      const { response } = await clients[i].chat.completions.create({ model: 'm-rl', messages: [{ role: 'user', content: 'x' }] }).withResponse();
      expect(response.headers.get('x-ratelimit-limit')).toBe('3');
      remaining.push(response.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const err = (await clients[1].chat.completions
      .create({ model: 'm-rl', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err.error as Record<string, unknown>).type).toBe('rate_limit_exceeded');
    expect(err.headers?.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(err.headers?.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect(Number(err.headers?.get('retry-after'))).toBeGreaterThan(0);
    // The Anthropic shape of the same 429 carries the API contract's `code` too.
    const messages = await fetch(`${servers[0].url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-rl', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(messages.status).toBe(429);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' } });
    // Counting tokens calls a provider too: it spends from the same bucket, so an empty one refuses it.
    const count = await fetch(`${servers[1].url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm-rl', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(count.status).toBe(429);
    // Listing models does not spend a token, but still reports the bucket.
    const models = await fetch(`${servers[1].url}/v1/models`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(models.status).toBe(200);
    expect(models.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(up.requests.filter((r) => r.method === 'POST')).toHaveLength(3);
  });
});
