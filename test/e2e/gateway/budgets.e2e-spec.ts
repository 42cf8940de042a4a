import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { type Loose } from '../../support/http';
import type { ScratchDatabase } from '../../support/infra';
import { sql, waitFor } from '../../support/infra';
import { scrape } from '../../support/prometheus';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { Client, Processes, scaledEnv } from '../tasks/tasks-harness';

const MODEL = 'gpt-4o-mini';
/** 1 micro-USD per output token, input free: a call's reservation (max_tokens × output price) is its exact cost. */
const PRICE = { input_micros_usd_per_million_tokens: 0, output_micros_usd_per_million_tokens: 1_000_000 };
const TTL_MS = 2000;

/**
 * Spend budgets on real processes (docs/budgets.md): two api processes and a worker on Postgres and Redis, a fake
 * provider priced so a call costs what its reservation says, the official OpenAI and Anthropic SDKs as clients. The walls
 * of the routes; 50 concurrent calls at a key budget's edge across both apis; a fallback admitted again at its own price;
 * every spending path refused once a tenant budget is spent; thresholds on the feed and to a webhook once; an api killed
 * holding a reservation.
 */
describe('spend budgets (scaled: two apis + a worker)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let upstream: FakeUpstream;
  let cheap: FakeUpstream;
  let pricey: FakeUpstream;
  let apis: ServerProcess[] = [];
  let op: Client;
  const receivers: Server[] = [];

  beforeAll(async () => {
    [upstream, cheap, pricey] = await Promise.all([
      startFakeUpstream({ models: [MODEL] }),
      startFakeUpstream({ models: ['m-fallback'] }),
      startFakeUpstream({ models: ['m-fallback', 'm-other'] }),
    ]);
    const s = await scaledEnv({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      ...providerEnv('bud_a', cheap, { kind: 'local' }),
      ...providerEnv('bud_b', pricey, { kind: 'local' }),
      GATEWAY_PROVIDER_MAX_ATTEMPTS: '1',
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_BUDGET_RESERVATION_TTL: `${TTL_MS}ms`,
      GATEWAY_BUDGET_SWEEP_INTERVAL: '250ms',
      GATEWAY_WEBHOOK_INTERVAL: '100ms',
      GATEWAY_WEBHOOK_ALLOW_PRIVATE_IPS: 'true',
      GATEWAY_SECRET_KEY: 'budgets-e2e-secret-key-0123456789abcdef',
    });
    db = s.db;
    env = s.env;
    apis = await Promise.all([procs.start('api', env), procs.start('api', env)]);
    await procs.start('worker', env);
    op = new Client(apis[0].url);
    // Each process loads prices at start and on a change's doorbell; set them through both apis so neither waits on it.
    for (const api of apis) {
      const c = new Client(api.url);
      await c.ok('PUT', `/hecate/v1/settings/pricing/fake/${MODEL}`, PRICE);
      await c.ok('PUT', '/hecate/v1/settings/pricing/bud_a/m-fallback', PRICE);
      await c.ok('PUT', '/hecate/v1/settings/pricing/bud_b/m-fallback', { ...PRICE, output_micros_usd_per_million_tokens: 3_000_000 });
      await c.ok('PUT', '/hecate/v1/settings/pricing/bud_b/m-other', PRICE);
    }
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    for (const r of receivers) r.close();
    await Promise.all([upstream, cheap, pricey].map((u) => u?.close()));
    await db?.drop();
  });
  beforeEach(() => {
    for (const u of [upstream, cheap, pricey]) u.reset();
  });

  /** A key of `tenant` (inference and operator scopes, never admin) and clients of it on each api. */
  const tenantKey = async (tenant: string) => {
    const key = (await op.ok('POST', '/hecate/v1/api-keys', { name: `${tenant}-key`, tenant_id: tenant, scopes: ['inference', 'operator'] })) as Loose;
    return {
      id: key.id as string,
      secret: key.secret as string,
      on: (i: number) => new Client(apis[i % apis.length].url, key.secret as string),
      openai: (i: number) => new OpenAI({ baseURL: `${apis[i % apis.length].url}/v1`, apiKey: key.secret as string, maxRetries: 0 }),
    };
  };
  const createBudget = async (body: Loose): Promise<Loose> => {
    const r = await op.call('POST', '/hecate/v1/budgets', body);
    expect({ status: r.status, body: r.text }).toMatchObject({ status: 201 });
    return r.body.data;
  };
  const budget = async (id: string, tenant: string, c = op) => (await c.ok('GET', `/hecate/v1/budgets/${id}?tenant_id=${tenant}`)) as Loose;
  const refusalOf = (err: unknown) => {
    const e = err as { status?: number; error?: Loose; headers?: Headers | Record<string, string> };
    return { status: e.status, type: e.error?.error?.type ?? e.error?.type, budget: e.error?.error?.budget ?? e.error?.budget };
  };

  it('the routes: admin scope to change a budget, the tenant to read it, every hostile body refused and nothing stored', async () => {
    const acme = await tenantKey('acme');
    const other = await tenantKey('globex');
    // No credential, a foreign Origin, a key without the admin scope: refused before anything is read.
    const body = JSON.stringify({ scope: 'tenant', period: 'day', limit_micros_usd: 1000 });
    expect((await fetch(`${op.url}/hecate/v1/budgets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    const foreign = await op.call('POST', '/hecate/v1/budgets', JSON.parse(body), { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const raise = await acme.on(0).call('POST', '/hecate/v1/budgets', JSON.parse(body));
    expect({ status: raise.status, type: raise.body.error?.type }).toEqual({ status: 403, type: 'forbidden' });
    for (const bad of [
      { scope: 'tenant', period: 'day', limit_micros_usd: 0 },
      { scope: 'tenant', period: 'day', limit_micros_usd: 1e16 },
      { scope: 'tenant', period: 'fortnight', limit_micros_usd: 10 },
      { scope: 'everyone', period: 'day', limit_micros_usd: 10 },
      { scope: 'tenant', period: 'day', limit_micros_usd: 10, thresholds: [100] },
      { scope: 'tenant', period: 'day', limit_micros_usd: 10, name: 'a\u0000b' },
      { scope: 'tenant', period: 'day', limit_micros_usd: 10, owner: 'me' },
      { scope: 'tenant', period: 'day', limit_micros_usd: 10, subject_id: acme.id },
      { scope: 'api_key', period: 'day', limit_micros_usd: 10 },
      { scope: 'api_key', period: 'day', limit_micros_usd: 10, subject_id: 'no-such-key', tenant_id: 'acme' },
      // A key of another tenant is not a subject of this one.
      { scope: 'api_key', period: 'day', limit_micros_usd: 10, subject_id: other.id, tenant_id: 'acme' },
      { scope: 'agent', period: 'day', limit_micros_usd: 10, subject_id: 'agt_nope', tenant_id: 'acme' },
    ]) {
      const r = await op.call('POST', '/hecate/v1/budgets', bad);
      expect({ bad, status: r.status, type: r.body.error?.type }).toEqual({ bad, status: 400, type: 'invalid_request' });
    }
    expect(await sql(db.url, 'SELECT id FROM budgets')).toEqual([]);

    const b = await createBudget({
      scope: 'api_key',
      subject_id: acme.id,
      tenant_id: 'acme',
      period: 'month',
      limit_micros_usd: 5_000_000,
      thresholds: [80, 50],
      name: 'acme key',
    });
    expect(b).toMatchObject({
      tenant_id: 'acme',
      scope: 'api_key',
      subject_id: acme.id,
      period: 'month',
      limit_micros_usd: 5_000_000,
      limit_usd: '5.000000',
      thresholds: [50, 80],
      current: { spent_micros_usd: 0, reserved_micros_usd: 0, remaining_micros_usd: 5_000_000, calls: 0, thresholds_reached: [] },
      created_by: 'operator',
    });
    expect(Date.parse(b.current.resets_at)).toBeGreaterThan(Date.now());
    const dup = await op.call('POST', '/hecate/v1/budgets', { scope: 'api_key', subject_id: acme.id, tenant_id: 'acme', period: 'month', limit_micros_usd: 1 });
    expect({ status: dup.status, type: dup.body.error?.type }).toEqual({ status: 409, type: 'conflict' });

    // The tenant's key reads its budgets (not another tenant's), and cannot change them or reach another tenant's.
    expect(((await acme.on(1).call('GET', '/hecate/v1/budgets')).body.data as Loose[]).map((x) => x.id)).toEqual([b.id]);
    expect((await other.on(0).call('GET', `/hecate/v1/budgets/${b.id}`)).status).toBe(404);
    expect((await other.on(0).call('GET', '/hecate/v1/budgets?tenant_id=acme')).status).toBe(403);
    expect((await acme.on(0).call('PATCH', `/hecate/v1/budgets/${b.id}`, { limit_micros_usd: 9e12 })).status).toBe(403);
    expect((await acme.on(0).call('DELETE', `/hecate/v1/budgets/${b.id}`)).status).toBe(403);
    expect((await op.call('PATCH', `/hecate/v1/budgets/${b.id}?tenant_id=acme`, { period: 'day' })).status).toBe(400);
    expect((await op.call('PATCH', `/hecate/v1/budgets/${b.id}?tenant_id=acme`, { limit_micros_usd: 7 })).body.data.limit_micros_usd).toBe(7);
    // Every route: no credential 401, a foreign Origin 403, an oversized body 400/413; nothing changed.
    for (const [method, path] of [
      ['GET', '/hecate/v1/budgets'],
      ['GET', `/hecate/v1/budgets/${b.id}?tenant_id=acme`],
      ['PATCH', `/hecate/v1/budgets/${b.id}?tenant_id=acme`],
      ['DELETE', `/hecate/v1/budgets/${b.id}?tenant_id=acme`],
    ] as const) {
      const patch = method === 'PATCH' ? { body: JSON.stringify({ limit_micros_usd: 1 }), headers: { 'content-type': 'application/json' } } : {};
      expect({ method, path, status: (await fetch(`${op.url}${path}`, { method, ...patch })).status }).toEqual({ method, path, status: 401 });
      const foreignOrigin = await op.call(method, path, method === 'PATCH' ? { limit_micros_usd: 1 } : undefined, { origin: 'https://evil.example' });
      expect({ method, path, status: foreignOrigin.status }).toEqual({ method, path, status: 403 });
    }
    const huge = await op.call('PATCH', `/hecate/v1/budgets/${b.id}?tenant_id=acme`, { name: 'x'.repeat(2_000_000) });
    expect([400, 413]).toContain(huge.status);
    expect((await budget(b.id, 'acme')).limit_micros_usd).toBe(7);
    expect((await op.call('DELETE', `/hecate/v1/budgets/${b.id}?tenant_id=acme`)).body.data).toEqual({ id: b.id, deleted: true });
    expect((await op.call('GET', `/hecate/v1/budgets/${b.id}?tenant_id=acme`)).status).toBe(404);
  });

  it('50 concurrent calls at a key budget’s edge across two apis: at most one call’s cost over, every refusal a 429 naming the budget, thresholds announced once', async () => {
    const k = await tenantKey('edge');
    const b = await createBudget({ scope: 'api_key', subject_id: k.id, tenant_id: 'edge', period: 'day', limit_micros_usd: 205, thresholds: [50, 80] });
    // A webhook of the tenant told of its budget events (the key may subscribe: operator scope).
    const got: Loose[] = [];
    const receiver: Server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        got.push(JSON.parse(text));
        res.writeHead(200).end('ok');
      });
    });
    receivers.push(receiver);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    expect((await k.on(0).call('POST', '/hecate/v1/webhooks', { url: hook, event_types: ['budget.*'] })).status).toBe(201);
    upstream.script({ match: MODEL, content: 'ok', usage: { input: 7, output: 10 }, latencyMs: 50, times: Infinity });
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        k
          .openai(i)
          .chat.completions.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: `call ${i}` }] })
          .then(
            (r) => ({ ok: true as const, cost: Number(r.usage?.completion_tokens ?? 0) }),
            (err: unknown) => ({ ok: false as const, ...refusalOf(err), retryAfter: Number((err as { headers?: Headers }).headers?.get?.('retry-after')) }),
          ),
      ),
    );
    const served = outcomes.filter((o) => o.ok);
    const refused = outcomes.filter((o) => !o.ok);
    // Each call's reservation is its cost (10): calls are let in while spent + in flight < 205, so exactly 21, 210 spent.
    expect(served.length).toBe(21);
    expect(upstream.requests.filter((r) => r.method === 'POST').length).toBe(21);
    for (const r of refused) {
      expect(r).toMatchObject({
        status: 429,
        type: 'budget_exceeded',
        budget: { id: b.id, scope: 'api_key', subject_id: k.id, period: 'day', limit_micros_usd: 205 },
      });
      expect(r.retryAfter).toBeGreaterThan(0);
      expect(r.retryAfter).toBeLessThanOrEqual(86_400);
    }
    const after = await waitFor(
      async () => {
        const x = await budget(b.id, 'edge');
        return x.current.reserved_micros_usd === 0 && x.current.thresholds_reached.length === 3 ? x : undefined;
      },
      { timeoutMs: 10_000, what: 'every reservation settled and the thresholds marked' },
    );
    expect(after.current).toMatchObject({ spent_micros_usd: 210, remaining_micros_usd: 0, calls: 21, thresholds_reached: [50, 80, 100] });
    expect(after.current.spent_micros_usd).toBeLessThanOrEqual(205 + 10);
    // The ledger agrees: the usage rows of the key add up to what the budget counted.
    const ledger = await waitFor(
      async () => {
        const [row] = await sql<{ n: string; cost: string }>(
          db.url,
          `SELECT count(*) AS n, sum(cost_micros_usd) AS cost FROM usage_events WHERE api_key_id = $1`,
          [k.id],
        );
        return Number(row.n) === 21 ? row : undefined;
      },
      { timeoutMs: 10_000, what: 'the usage rows of 21 calls' },
    );
    expect(Number(ledger.cost)).toBe(210);
    // One event per threshold reached, whichever api settled the call that crossed it.
    const feed = (await k.on(1).ok('GET', '/hecate/v1/events?event_type=budget.threshold_reached,budget.exhausted')) as Loose[];
    expect(feed.map((e) => [e.type, e.data.threshold_percent ?? null])).toEqual([
      ['budget.threshold_reached', 50],
      ['budget.threshold_reached', 80],
      ['budget.exhausted', null],
    ]);
    expect(feed[2].data).toMatchObject({ budget_id: b.id, scope: 'api_key', limit_micros_usd: 205, spent_micros_usd: expect.any(Number) });
    const delivered = await waitFor(async () => (got.length >= 3 ? got : undefined), { timeoutMs: 15_000, what: 'three budget deliveries' });
    expect(delivered.map((d) => [d.type, d.data.data.threshold_percent ?? null])).toEqual(feed.map((e) => [e.type, e.data.threshold_percent ?? null]));
    // The metrics: every refusal counted by the api that refused it; the shared gauges see the spent budget.
    const [m0, m1] = await Promise.all(apis.map((a) => scrape(a.url)));
    expect(m0.sum('hecate_budget_refusals_total', { scope: 'api_key' }) + m1.sum('hecate_budget_refusals_total', { scope: 'api_key' })).toBe(29);
    expect(m0.sum('hecate_budget_threshold_events_total', { scope: 'api_key' }) + m1.sum('hecate_budget_threshold_events_total', { scope: 'api_key' })).toBe(3);
    expect(m0.sum('hecate_budgets', { scope: 'api_key', state: 'exhausted' })).toBeGreaterThanOrEqual(1);
    expect(m1.sum('hecate_budget_utilization_max', { scope: 'api_key' })).toBeGreaterThanOrEqual(1);
    // Raising the limit lets calls in again at once.
    await op.ok('PATCH', `/hecate/v1/budgets/${b.id}?tenant_id=edge`, { limit_micros_usd: 1000 });
    expect(
      (await k.openai(1).chat.completions.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'more' }] })).choices[0].message.content,
    ).toBe('ok');
  });

  it('every attempt is admitted again: a fallback to a pricier provider is refused once another call spent the budget meanwhile', async () => {
    const k = await tenantKey('fallback');
    const b = await createBudget({ scope: 'tenant', tenant_id: 'fallback', period: 'week', limit_micros_usd: 200 });
    // The cheap provider answers 500 after a while; meanwhile another call (on the pricier one's other model) spends the budget.
    cheap.script({ match: 'm-fallback', status: 500, latencyMs: 1500 });
    pricey.script({ match: 'm-other', content: 'spent', usage: { input: 1, output: 250 } });
    const first = k
      .openai(0)
      .chat.completions.create({ model: 'm-fallback', max_tokens: 10, messages: [{ role: 'user', content: 'first' }] })
      .then(
        () => ({ status: 200 }),
        (err: unknown) => refusalOf(err),
      );
    await cheap.waitForRequests(1);
    await k.openai(1).chat.completions.create({ model: 'm-other', max_tokens: 300, messages: [{ role: 'user', content: 'second' }] });
    expect(await first).toMatchObject({ status: 429, type: 'budget_exceeded', budget: { id: b.id, scope: 'tenant' } });
    expect(pricey.requests.filter((r) => r.model === 'm-fallback')).toEqual([]);
    const after = await waitFor(async () => {
      const x = await budget(b.id, 'fallback');
      return x.current.reserved_micros_usd === 0 ? x : undefined;
    });
    // Two calls let in (the first's failed attempt cost nothing), the fallback refused: 250 spent.
    expect(after.current).toMatchObject({ spent_micros_usd: 250, calls: 2 });

    // With room, the fallback is let in at its own price (3 per token): 2 attempts counted, the pricier cost spent.
    await op.ok('PATCH', `/hecate/v1/budgets/${b.id}?tenant_id=fallback`, { limit_micros_usd: 10_000 });
    cheap.script({ match: 'm-fallback', status: 500 });
    pricey.script({ match: 'm-fallback', content: 'fell back', usage: { input: 1, output: 10 } });
    const { data: r, response } = await k
      .openai(0)
      .chat.completions.create({ model: 'm-fallback', max_tokens: 10, messages: [{ role: 'user', content: 'again' }] })
      .withResponse();
    expect([r.choices[0].message.content, response.headers.get('x-runtime-provider')]).toEqual(['fell back', 'bud_b']);
    // Each attempt was let in on its own (the cheap one first unless its failure moved it back in the route order).
    const attempts = Number(response.headers.get('x-runtime-attempts'));
    const settled = await waitFor(async () => {
      const x = await budget(b.id, 'fallback');
      return x.current.reserved_micros_usd === 0 && x.current.calls === 2 + attempts ? x : undefined;
    });
    expect(settled.current.spent_micros_usd).toBe(250 + 30);
  });

  it('a spent tenant budget refuses every path that calls a model: /v1 chat, messages, responses, chat sessions, an agent loop, an Agent Chat turn', async () => {
    const k = await tenantKey('spent');
    const c = k.on(0);
    const agent = (await c.ok('POST', '/hecate/v1/agents', { name: 'spender', model: MODEL, provider: 'fake', runtime_kind: 'agent' })) as Loose;
    const agentBudget = await createBudget({ scope: 'agent', subject_id: agent.id, tenant_id: 'spent', period: 'total', limit_micros_usd: 5 });
    // The agent's first run is let in (nothing spent yet) and spends 10; its second is refused by the agent's budget.
    upstream.script({ match: MODEL, content: 'done', usage: { input: 1, output: 10 }, times: Infinity });
    const run = async () => {
      const task = (await c.ok('POST', '/hecate/v1/tasks', { execution_kind: 'agent_loop', agent_id: agent.id, prompt: 'go' })) as Loose;
      const started = (await c.ok('POST', `/hecate/v1/tasks/${task.id}/start`)) as Loose;
      return waitFor(
        async () => {
          const r = (await c.ok('GET', `/hecate/v1/tasks/${task.id}/runs/${started.id}`)) as Loose;
          return ['completed', 'failed'].includes(r.status) ? r : undefined;
        },
        { timeoutMs: 30_000, what: 'the agent run to end' },
      );
    };
    expect((await run()).status).toBe('completed');
    const second = await run();
    expect(second.status).toBe('failed');
    expect(JSON.stringify(second)).toContain('budget_exceeded');
    const spentAgent = await waitFor(async () => {
      const x = await budget(agentBudget.id, 'spent');
      return x.current.reserved_micros_usd === 0 ? x : undefined;
    });
    expect(spentAgent.current).toMatchObject({ spent_micros_usd: 10, calls: 1, thresholds_reached: [100] });
    // The task records the key that created it: its budgets apply to the run's calls.
    expect(
      (await sql<{ api_key_id: string }>(db.url, `SELECT DISTINCT api_key_id FROM tasks WHERE agent_id = $1`, [agent.id])).map((r) => r.api_key_id),
    ).toEqual([k.id]);

    // The tenant's budget: one call let in and spent past it; then every door answers budget_exceeded.
    const t = await createBudget({ scope: 'tenant', tenant_id: 'spent', period: 'day', limit_micros_usd: 1 });
    await k.openai(1).chat.completions.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'spend' }] });
    await waitFor(async () => ((await budget(t.id, 'spent')).current.reserved_micros_usd === 0 ? true : undefined));
    const before = upstream.requests.length;

    const chat = await k
      .openai(0)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true })
      .then(() => 'served', refusalOf);
    expect(chat).toMatchObject({ status: 429, type: 'budget_exceeded', budget: { id: t.id } });
    const anthropic = new Anthropic({ baseURL: apis[1].url, apiKey: k.secret, maxRetries: 0 });
    const messages = await anthropic.messages
      .create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .then(() => 'served', refusalOf);
    expect(messages).toMatchObject({ status: 429, type: 'budget_exceeded' });
    const responses = await k
      .openai(1)
      .responses.create({ model: MODEL, input: 'x' })
      .then(() => 'served', refusalOf);
    expect(responses).toMatchObject({ status: 429, type: 'budget_exceeded' });

    const session = (await c.ok('POST', '/hecate/v1/chat/sessions', { title: 'spent' })) as Loose;
    const sent = await c.call('POST', `/hecate/v1/chat/sessions/${session.id}/messages`, { content: 'x', model: MODEL });
    expect({ status: sent.status, type: sent.body.error?.type }).toEqual({ status: 429, type: 'budget_exceeded' });

    const ac = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', provider: 'fake', model: MODEL })) as Loose;
    await c.call('POST', `/hecate/v1/agent-chat/sessions/${ac.id}/messages`, { content: 'x' });
    const failed = await waitFor(
      async () => {
        const v = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${ac.id}`)) as Loose;
        const reply = (v.messages as Loose[]).find((m) => m.role === 'assistant' && m.error);
        return reply;
      },
      { timeoutMs: 20_000, what: 'the Agent Chat turn to fail' },
    );
    expect(failed.error.type).toBe('budget_exceeded');
    // The turn's end is on the tenant's feed (and so to its webhooks), with the refusal.
    const [ended] = await waitFor(
      async () => {
        const list = (await c.ok('GET', '/hecate/v1/events?event_type=agent_chat.turn.finished')) as Loose[];
        return list.length > 0 ? list : undefined;
      },
      { what: 'agent_chat.turn.finished on the feed' },
    );
    expect(ended).toMatchObject({ run_id: ac.id, data: { session_id: ac.id, status: 'failed', error: { type: 'budget_exceeded' } } });
    expect(await sql(db.url, `SELECT api_key_id FROM agent_chat_sessions WHERE id = $1`, [ac.id])).toEqual([{ api_key_id: k.id }]);
    // None of them reached the provider.
    expect(upstream.requests.length).toBe(before);
  });

  it('an api SIGKILLed while its call holds a reservation: a worker gives the reservation back once it expires, and calls are let in again', async () => {
    const k = await tenantKey('killed');
    const b = await createBudget({ scope: 'api_key', subject_id: k.id, tenant_id: 'killed', period: 'day', limit_micros_usd: 10 });
    const victim = await procs.start('api', env);
    upstream.script({ match: MODEL, hangAfterChunks: 1 });
    const held = new OpenAI({ baseURL: `${victim.url}/v1`, apiKey: k.secret, maxRetries: 0 }).chat.completions
      .create({ model: MODEL, max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hold' }] })
      .then(async (s) => {
        for await (const _ of s) {
          // The stream stalls after its first delta; the process dies under it.
        }
      })
      .catch(() => 'broken');
    // The call reached the provider (the new api's model discovery is a GET): its reservation holds.
    await upstream.waitFor((u) => u.requests.some((r) => r.method === 'POST'));
    expect((await budget(b.id, 'killed')).current.reserved_micros_usd).toBe(10);
    // The reservation fills the budget: another call is refused while it holds.
    const refused = await k
      .openai(0)
      .chat.completions.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .then(() => 'served', refusalOf);
    expect(refused).toMatchObject({ status: 429, type: 'budget_exceeded', budget: { reserved_micros_usd: 10, spent_micros_usd: 0 } });
    await victim.stop('SIGKILL');
    expect(await held).toBe('broken');
    const freed = await waitFor(
      async () => {
        const x = await budget(b.id, 'killed');
        return x.current.reserved_micros_usd === 0 ? x : undefined;
      },
      { timeoutMs: TTL_MS + 10_000, what: 'the dead call’s reservation given back' },
    );
    expect(freed.current.spent_micros_usd).toBe(0);
    expect(await sql(db.url, `SELECT id FROM budget_reservations`)).toEqual([]);
    upstream.script({ match: MODEL, content: 'again', usage: { input: 1, output: 10 } });
    expect(
      (await k.openai(1).chat.completions.create({ model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'y' }] })).choices[0].message.content,
    ).toBe('again');
  });
});
