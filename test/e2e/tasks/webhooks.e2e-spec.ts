import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import type { ScratchDatabase } from '../../support/infra';
import { sql, waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { Client, Json, Processes, scaledEnv, TOKEN } from './tasks-harness';

const LEASE_MS = 2000;
const TICK = { execution_kind: 'file', file_path: 'tick.txt', file_content: 'tick' };

interface Received {
  id: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/**
 * A webhook receiver on a local port: records every request, and answers with what `answer` says (a status, or `hang`:
 * never answer, as a stuck receiver).
 */
class Receiver {
  readonly got: Received[] = [];
  answer: (r: Received) => number | 'hang' = () => 200;
  private server!: Server;
  private readonly hung: ServerResponse[] = [];
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = { id: String(req.headers['webhook-id']), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.got.push(r);
        const a = this.answer(r);
        if (a === 'hang') this.hung.push(res);
        else res.writeHead(a, { 'content-type': 'text/plain' }).end(a < 300 ? 'ok' : 'nope');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    for (const r of this.hung) r.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * Webhooks on real processes (docs/webhooks.md): an api and two workers on Postgres and Redis with a 2 s lease, a local
 * receiver, and the Standard Webhooks reference library (`standardwebhooks`) verifying every signature. Deliveries of the
 * public feed's events, in feed order, retried with backoff, logged, redelivered by hand, a webhook disabled after
 * failures in a row, and a worker killed in the middle of an attempt.
 */
describe('webhooks (scaled: api + two workers)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let c: Client;
  let workers: ServerProcess[] = [];
  const receiver = new Receiver();
  let upstream: FakeUpstream;

  beforeAll(async () => {
    await receiver.start();
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    const s = await scaledEnv({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(LEASE_MS / 1000),
      GATEWAY_TASK_RECONCILE_INTERVAL: '500ms',
      GATEWAY_QUEUE_LOCK_MS: '2000',
      GATEWAY_SECRET_KEY: 'webhooks-e2e-secret-key-0123456789abcdef',
      GATEWAY_WEBHOOK_INTERVAL: '100ms',
      GATEWAY_SCHEDULER_INTERVAL: '100ms',
      GATEWAY_WEBHOOK_TIMEOUT: '3s',
      // Long enough that a loaded machine's late retry (the second attempt more than a few seconds after the first) is still
      // inside it; the disable test waits about two windows.
      GATEWAY_WEBHOOK_RETRY_WINDOW: '10s',
      GATEWAY_WEBHOOK_DISABLE_AFTER: '2',
      GATEWAY_WEBHOOK_ALLOW_PRIVATE_IPS: 'true',
      // Retention runs only when asked (POST /hecate/v1/system/retention/run): the last test keeps two ended deliveries.
      GATEWAY_RETENTION_WEBHOOK_DELIVERIES_MAX_COUNT: '2',
      GATEWAY_RETENTION_SCHEDULE_FIRINGS_MAX_COUNT: '0',
    });
    db = s.db;
    env = s.env;
    const [api, w1, w2] = await Promise.all([procs.start('api', env), procs.start('worker', env), procs.start('worker', env)]);
    workers = [w1, w2];
    c = new Client(api.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await receiver.close();
    await upstream?.close();
    await db?.drop();
  });
  beforeEach(() => {
    receiver.got.length = 0;
    receiver.answer = () => 200;
  });

  const create = async (body: Json): Promise<Json> => {
    const r = await c.call('POST', '/hecate/v1/webhooks', body);
    expect({ status: r.status, body: r.text }).toMatchObject({ status: 201 });
    return r.body.data as Json;
  };
  const deliveries = async (id: string): Promise<Json[]> => (await c.ok('GET', `/hecate/v1/webhooks/${id}/deliveries?limit=200`)) as unknown as Json[];
  const finishedRun = async () => {
    const t = await c.startTask(TICK);
    await c.waitStatus(t.taskId, t.runId, ['completed']);
    return t;
  };
  const bodies = (hookSecret: string, list: Received[]) => list.map((r) => new Webhook(hookSecret).verify(r.body, r.headers as Record<string, string>) as Json);

  it('delivers the feed events it subscribes to, signed as Standard Webhooks says, in feed order; refuses metadata URLs; other tenants see nothing', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://metadata.google.internal/', 'ftp://example.com/', 'http://user:pw@example.com/']) {
      const r = await c.call('POST', '/hecate/v1/webhooks', { url, event_types: ['run.finished'] });
      expect({ url, status: r.status, type: r.body.error?.type }).toEqual({ url, status: 400, type: 'invalid_request' });
    }
    expect((await c.call('POST', '/hecate/v1/webhooks', { url: receiver.url, event_types: ['Run Finished'] })).status).toBe(400);
    // No credential, a foreign Origin, a hostile body: refused, nothing stored.
    const body = JSON.stringify({ url: receiver.url, event_types: ['*'] });
    expect((await fetch(`${c.url}/hecate/v1/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    const foreign = await fetch(`${c.url}/hecate/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' },
      body,
    });
    expect(foreign.status).toBe(403);
    for (const hostile of [
      { url: receiver.url, event_types: ['*'], secret: 'whsec_mine' },
      { url: `${receiver.url}?${'x'.repeat(2001)}`, event_types: ['*'] },
      { url: receiver.url, event_types: Array.from({ length: 101 }, (_, i) => `t.e${i}`) },
      { url: receiver.url, event_types: ['run.finished\u0000'] },
    ]) {
      const r = await c.call('POST', '/hecate/v1/webhooks', hostile);
      expect({ status: r.status, type: r.body.error?.type }).toEqual({ status: 400, type: 'invalid_request' });
    }
    expect(await c.ok('GET', '/hecate/v1/webhooks')).toEqual([]);

    const hook = await create({ url: receiver.url, event_types: ['run.finished', 'run.queued'], description: 'ci' });
    expect(hook).toMatchObject({ status: 'enabled', event_types: ['run.finished', 'run.queued'], failure_streak: 0 });
    expect(hook.secret).toMatch(/^whsec_/);
    expect(await c.ok('GET', `/hecate/v1/webhooks/${hook.id}`)).not.toHaveProperty('secret');
    expect(JSON.stringify(await sql(db.url, 'SELECT secret FROM webhooks WHERE id = $1', [hook.id]))).not.toContain(hook.secret.slice(6));

    const runs = [await finishedRun(), await finishedRun(), await finishedRun()];
    const got = await waitFor(() => (receiver.got.length >= 6 ? receiver.got.slice() : undefined), { timeoutMs: 15_000, what: 'six deliveries' });
    const payloads = bodies(hook.secret as string, got);
    // Each run's queued, then finished; in feed order (the envelope's `sequence` is the feed cursor).
    expect(payloads.map((p) => [p.data.run_id, p.type])).toEqual(
      runs.flatMap((r) => [
        [r.runId, 'run.queued'],
        [r.runId, 'run.finished'],
      ]),
    );
    const cursors = payloads.map((p) => p.data.sequence as number);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(payloads[1]).toMatchObject({ type: 'run.finished', timestamp: expect.any(String), data: { task_id: runs[0].taskId, type: 'run.finished' } });
    // A tampered body fails the reference verification.
    expect(() => new Webhook(hook.secret as string).verify(got[0].body.replace('run', 'nur'), got[0].headers as Record<string, string>)).toThrow();
    const log = await waitFor(async () => {
      const l = await deliveries(hook.id);
      return l.length === 6 && l.every((d) => d.status === 'delivered') ? l : undefined;
    });
    expect(log[0]).toMatchObject({ attempts: 1, last_status_code: 200, last_response: 'ok', next_attempt_at: null });
    expect(new Set(log.map((d) => d.id))).toEqual(new Set(got.map((r) => r.id)));

    const key = (await c.ok('POST', '/hecate/v1/api-keys', { name: 'globex', scopes: ['operator'], tenant_id: 'globex' })).secret as string;
    const globex = new Client(c.url, key);
    for (const [method, path] of [
      ['GET', `/hecate/v1/webhooks/${hook.id}`],
      ['PATCH', `/hecate/v1/webhooks/${hook.id}`],
      ['GET', `/hecate/v1/webhooks/${hook.id}/deliveries`],
      ['POST', `/hecate/v1/webhooks/${hook.id}/deliveries/${log[0].id}/redeliver`],
      ['DELETE', `/hecate/v1/webhooks/${hook.id}`],
    ]) {
      const r = await globex.call(method, path, method === 'PATCH' ? { description: 'mine' } : undefined);
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
    }
    // A tenant's webhook gets its own tenant's events only.
    const theirs = (await globex.call('POST', '/hecate/v1/webhooks', { url: receiver.url, event_types: ['*'] })).body.data as Json;
    await finishedRun();
    await new Promise((r) => setTimeout(r, 1000));
    expect(await globex.ok('GET', `/hecate/v1/webhooks/${theirs.id}/deliveries`)).toEqual([]);
    await c.ok('DELETE', `/hecate/v1/webhooks/${hook.id}`);
    await globex.ok('DELETE', `/hecate/v1/webhooks/${theirs.id}`);
  }, 90_000);

  it("a schedule's fire reaches a webhook subscribed to schedule.*", async () => {
    const hook = await create({ url: receiver.url, event_types: ['schedule.*'] });
    const schedule = (await c.ok('POST', '/hecate/v1/schedules', { run_at: new Date().toISOString(), target: { type: 'task', task: TICK } })) as Json;
    const [got] = await waitFor(() => (receiver.got.length > 0 ? receiver.got : undefined), { timeoutMs: 15_000, what: 'the schedule.fired delivery' });
    const [payload] = bodies(hook.secret as string, [got]);
    const [firing] = (await c.ok('GET', `/hecate/v1/schedules/${schedule.id}/firings`)) as unknown as Json[];
    expect(payload).toMatchObject({
      type: 'schedule.fired',
      data: { type: 'schedule.fired', task_id: firing.task_id, run_id: firing.run_id, data: { schedule_id: schedule.id, firing_id: firing.id } },
    });
    // Its run ends here, not as a stray run.finished in the next test's webhook.
    await c.waitStatus(firing.task_id as string, firing.run_id as string, ['completed']);
    await c.ok('DELETE', `/hecate/v1/webhooks/${hook.id}`);
  }, 90_000);

  it("an Agent Chat turn's end reaches a webhook subscribed to agent_chat.turn.finished, once, with its status", async () => {
    const hook = await create({ url: receiver.url, event_types: ['agent_chat.turn.finished'] });
    const session = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', provider: 'fake', model: 'gpt-4o-mini' })) as Json;
    upstream.script({ match: 'gpt-4o-mini', content: 'the reply' });
    const view = (await c.ok('POST', `/hecate/v1/agent-chat/sessions/${session.id}/messages`, { content: 'hello' })) as Json;
    const [got] = await waitFor(() => (receiver.got.length > 0 ? receiver.got : undefined), { timeoutMs: 15_000, what: 'the turn delivery' });
    const [payload] = bodies(hook.secret as string, [got]);
    const reply = (view.messages as Json[]).find((m) => m.role === 'assistant')!;
    expect(payload).toMatchObject({
      type: 'agent_chat.turn.finished',
      data: {
        type: 'agent_chat.turn.finished',
        run_id: session.id,
        data: { session_id: session.id, runtime_kind: 'model', status: 'completed', assistant_message_id: reply.id, provider: 'fake', model: 'gpt-4o-mini' },
      },
    });
    expect(reply.content).toBe('the reply');
    const log = await waitFor(async () => {
      const l = await deliveries(hook.id);
      return l.length === 1 && l[0].status === 'delivered' ? l : undefined;
    });
    expect(log[0].event_type).toBe('agent_chat.turn.finished');
    await c.ok('DELETE', `/hecate/v1/webhooks/${hook.id}`);
  }, 60_000);

  it('a failing receiver is retried with backoff until it recovers, later events wait their turn, and a delivery can be sent again', async () => {
    const hook = await create({ url: receiver.url, event_types: ['run.finished'] });
    let failures = 2;
    receiver.answer = () => (failures-- > 0 ? 503 : 200);
    const first = await finishedRun();
    const second = await finishedRun();
    const log = await waitFor(
      async () => {
        const l = await deliveries(hook.id);
        return l.length === 2 && l.every((d) => d.status === 'delivered') ? l : undefined;
      },
      { timeoutMs: 30_000, what: 'both delivered' },
    );
    const [older, newer] = [...log].reverse();
    expect(older).toMatchObject({ event_type: 'run.finished', attempts: 3, last_status_code: 200 });
    expect(newer.attempts).toBe(1);
    // Receiver's view: the same webhook-id three times (1 s, then 2 s apart), then the second event — never before the first.
    const ids = receiver.got.map((r) => r.id);
    expect(ids).toEqual([older.id, older.id, older.id, newer.id]);
    const gaps = receiver.got.slice(1, 3).map((r, i) => r.at - receiver.got[i].at);
    expect(gaps[0]).toBeGreaterThanOrEqual(900);
    expect(gaps[1]).toBeGreaterThanOrEqual(1900);
    expect(bodies(hook.secret as string, receiver.got).map((p) => p.data.run_id)).toEqual([first.runId, first.runId, first.runId, second.runId]);

    const again = (await c.ok('POST', `/hecate/v1/webhooks/${hook.id}/deliveries/${older.id}/redeliver`)) as Json;
    expect(again).toMatchObject({ id: older.id, status: 'pending' });
    await waitFor(() => receiver.got.length === 5, { what: 'the redelivery' });
    expect(receiver.got[4].id).toBe(older.id);
    await c.ok('DELETE', `/hecate/v1/webhooks/${hook.id}`);
  }, 90_000);

  it('is disabled, with the reason, after deliveries fail for the whole retry window twice in a row; enabling it again delivers what waited', async () => {
    const hook = await create({ url: receiver.url, event_types: ['run.finished'] });
    receiver.answer = () => 500;
    await finishedRun();
    await finishedRun();
    const third = await finishedRun();
    const disabled = await waitFor(
      async () => {
        const h = (await c.ok('GET', `/hecate/v1/webhooks/${hook.id}`)) as Json;
        return h.status === 'disabled' ? h : undefined;
      },
      { timeoutMs: 45_000, what: 'the webhook disabled' },
    );
    expect(disabled).toMatchObject({ failure_streak: 2, disabled_reason: '2 deliveries in a row failed; the last: HTTP 500' });
    const log = await deliveries(hook.id);
    expect(log.map((d) => d.status).sort()).toEqual(['failed', 'failed', 'pending']);
    receiver.answer = () => 200;
    const before = receiver.got.length;
    expect(((await c.ok('PATCH', `/hecate/v1/webhooks/${hook.id}`, { enabled: true })) as Json).status).toBe('enabled');
    await waitFor(() => receiver.got.length > before, { what: 'the waiting delivery' });
    expect(bodies(hook.secret as string, receiver.got.slice(before)).map((p) => p.data.run_id)).toEqual([third.runId]);
    await c.ok('DELETE', `/hecate/v1/webhooks/${hook.id}`);
  }, 90_000);

  it('a worker killed while a receiver holds its request: after the lease the other worker sends the same webhook-id, and nothing is lost', async () => {
    const hook = await create({ url: receiver.url, event_types: ['run.finished'] });
    // The first request is held open (a stuck receiver); every later one is answered.
    receiver.answer = () => (receiver.got.length === 1 ? 'hang' : 200);
    const runs = [await finishedRun(), await finishedRun()];
    const stuck = await waitFor(() => receiver.got[0], { what: 'the first attempt' });
    const [{ claim_owner: owner }] = await sql<{ claim_owner: string }>(db.url, 'SELECT claim_owner FROM webhooks WHERE id = $1', [hook.id]);
    const holder = workers.find((w) => owner.includes(`:${w.proc.pid}:`))!;
    expect(holder).toBeDefined();
    // The runtime goes on meanwhile: a run finishes while the receiver holds the webhook's request.
    const during = await finishedRun();
    await holder.stop('SIGKILL');
    const killedAt = Date.now();
    const got = await waitFor(() => (receiver.got.filter((r) => r.id !== stuck.id || r.at > killedAt).length >= 3 ? receiver.got.slice() : undefined), {
      timeoutMs: 20_000,
      what: 'the deliveries after the takeover',
    });
    // At least once: the stuck delivery again, with the same id, then the others in order; nothing lost.
    const runIds = bodies(hook.secret as string, got).map((p) => p.data.run_id);
    expect(got[0].id).toBe(stuck.id);
    expect(got.filter((r) => r.id === stuck.id).length).toBeGreaterThanOrEqual(2);
    expect([...new Set(runIds)]).toEqual([runs[0].runId, runs[1].runId, during.runId]);
    const log = await waitFor(async () => {
      const l = await deliveries(hook.id);
      return l.length === 3 && l.every((d) => d.status === 'delivered') ? l : undefined;
    });
    expect(log.find((d) => d.id === stuck.id)).toMatchObject({ status: 'delivered', last_status_code: 200 });
    workers = [workers.find((w) => w !== holder)!, await procs.start('worker', env)];
    await c.ok('DELETE', `/hecate/v1/webhooks/${hook.id}`);
  }, 90_000);

  it('retention prunes ended deliveries and firings beyond their limits, never a pending delivery', async () => {
    const hook = await create({ url: receiver.url, event_types: ['run.finished'] });
    await finishedRun();
    await finishedRun();
    await finishedRun();
    const ended = await waitFor(async () => {
      const l = await deliveries(hook.id);
      return l.length === 3 && l.every((d) => d.status === 'delivered') ? l : undefined;
    });
    // A receiver that refuses leaves the next delivery pending (retried with backoff).
    receiver.answer = () => 500;
    await finishedRun();
    const pending = await waitFor(async () => (await deliveries(hook.id)).find((d) => d.status === 'pending' && d.attempts > 0), {
      timeoutMs: 15_000,
      what: 'a pending delivery',
    });
    const sweep = (await c.ok('POST', '/hecate/v1/system/retention/run')) as Json;
    expect(sweep).toMatchObject({ status: 'completed', results: { webhook_deliveries: { max_count: 2 }, schedule_firings: { max_count: 0 } } });
    expect(sweep.results.webhook_deliveries.deleted).toBeGreaterThanOrEqual(1);
    const left = await deliveries(hook.id);
    // The newest two ended ones of the deployment are kept (this webhook's newest), and the pending one is untouched.
    expect(left.map((d) => d.id)).toContain(pending.id);
    expect(left.map((d) => d.id)).not.toContain(ended[2].id);
    expect(left.filter((d) => d.status !== 'pending').length).toBeLessThanOrEqual(2);
    expect(await sql(db.url, `SELECT id FROM schedule_firings WHERE status <> 'pending'`)).toEqual([]);
    receiver.answer = () => 200;
    await waitFor(async () => ((await deliveries(hook.id)).find((d) => d.id === pending.id)?.status === 'delivered' ? true : undefined), {
      timeoutMs: 15_000,
      what: 'the pending delivery delivered once the receiver recovers',
    });
    await c.ok('DELETE', `/hecate/v1/webhooks/${hook.id}`);
  }, 60_000);
});
