import { Client as Pg } from 'pg';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { providerEnv } from '../../support/provider-env';
import type { ScratchDatabase } from '../../support/infra';
import { sql, waitFor } from '../../support/infra';
import type { ServerProcess } from '../../support/server-process';
import { Client, Json, Processes, scaledEnv, TOKEN } from './tasks-harness';

const LEASE_MS = 2000;
const EVERY_SECOND = '* * * * * *';
const TICK = { execution_kind: 'file', file_path: 'tick.txt', file_content: 'tick' };

/**
 * Schedules on real processes (docs/schedules.md): an api and two workers on Postgres and Redis, a 2 s lease and a
 * 100 ms scheduler pass, so fires, takeovers and catch-up happen in seconds. What is checked is what a user sees (the
 * schedule and its firings over the API, the tasks and runs each fire started) and, for exactly-once, the rows: one
 * firing per fire time, one task per firing, one run per task.
 */
describe('schedules (scaled: api + two workers)', () => {
  const procs = new Processes();
  let db: ScratchDatabase;
  let env: Record<string, string>;
  let c: Client;
  let pg: Pg;
  let workers: ServerProcess[] = [];
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    const s = await scaledEnv({
      ...providerEnv('fake', upstream, { kind: 'local' }),
      GATEWAY_TASK_APPROVAL_POLICIES: 'none',
      GATEWAY_TASK_QUEUE_LEASE_SECONDS: String(LEASE_MS / 1000),
      GATEWAY_TASK_RECONCILE_INTERVAL: '500ms',
      GATEWAY_QUEUE_LOCK_MS: '2000',
      GATEWAY_SCHEDULER_INTERVAL: '100ms',
      GATEWAY_SCHEDULER_MISFIRE_GRACE: '1500ms',
    });
    db = s.db;
    env = s.env;
    const [api, w1, w2] = await Promise.all([procs.start('api', env), procs.start('worker', env), procs.start('worker', env)]);
    workers = [w1, w2];
    c = new Client(api.url);
    pg = new Pg({ connectionString: db.url });
    await pg.connect();
  }, 120_000);
  afterAll(async () => {
    await pg?.end();
    await procs.stopAll();
    await upstream?.close();
    await db?.drop();
  });

  const create = async (body: Json, client = c): Promise<Json> => {
    const r = await client.call('POST', '/hecate/v1/schedules', body);
    expect({ status: r.status, object: r.body.object }).toEqual({ status: 201, object: 'schedule' });
    return r.body.data as Json;
  };
  const firings = async (id: string, client = c): Promise<Json[]> =>
    (await client.ok('GET', `/hecate/v1/schedules/${id}/firings?limit=200`)) as unknown as Json[];
  const settled = (id: string, count: number, timeoutMs = 20_000) =>
    waitFor(
      async () => {
        const list = await firings(id);
        return list.filter((f) => f.status !== 'pending').length >= count && list.every((f) => f.status !== 'pending') ? list : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `${count} settled firings of ${id}` },
    );
  /** Every fired firing of these schedules has its own task with exactly one run; no other task was made by a fire. */
  const exactlyOnce = async (ids: string[]) => {
    const rows = await sql<{ firing: string; scheduled_for: Date; task_id: string; runs: string }>(
      db.url,
      `SELECT f.id AS firing, f.scheduled_for, f.task_id, (SELECT count(*) FROM task_runs r WHERE r.task_id = f.task_id) AS runs
         FROM schedule_firings f WHERE f.schedule_id = ANY($1) AND f.status = 'fired'`,
      [ids],
    );
    expect(rows.every((r) => Number(r.runs) === 1)).toBe(true);
    expect(new Set(rows.map((r) => r.task_id)).size).toBe(rows.length);
    const slots = await sql<{ n: string; distinct_slots: string }>(
      db.url,
      `SELECT count(*) AS n, count(DISTINCT (schedule_id, scheduled_for)) AS distinct_slots FROM schedule_firings WHERE schedule_id = ANY($1)`,
      [ids],
    );
    expect(slots[0].n).toBe(slots[0].distinct_slots);
    return rows;
  };

  it('CRUD, validation and tenant walls; a cron schedule fires in its time zone up to max_fires and completes', async () => {
    // Bad input: a 400 naming every problem, nothing stored.
    const bad = await c.call('POST', '/hecate/v1/schedules', {
      cron_expression: '61 * * *',
      run_at: new Date().toISOString(),
      timezone: 'Mars/Olympus',
      target: { type: 'task', task: TICK },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.type).toBe('invalid_request');
    expect(bad.body.error.problems).toEqual([
      'exactly one of cron_expression and run_at is required',
      expect.stringContaining('timezone: "Mars/Olympus" is not an IANA time zone'),
      expect.stringContaining('cron_expression: "61 * * *" must have 5 fields'),
    ]);
    expect((await c.call('POST', '/hecate/v1/schedules', { cron_expression: '0 9 * * *', target: { type: 'shell' } })).status).toBe(400);

    const daily = await create({
      name: 'standup',
      cron_expression: '30 9 * * 1-5',
      timezone: 'Europe/Berlin',
      target: { type: 'task', task: { ...TICK, title: 'daily' } },
    });
    expect(daily).toMatchObject({ kind: 'cron', status: 'active', timezone: 'Europe/Berlin', catch_up: 'skip', fire_count: 0, created_by: 'operator' });
    expect(daily.next_fire_times).toHaveLength(5);
    // 09:30 in Berlin is 07:30 or 08:30 UTC, depending on daylight saving time.
    for (const t of daily.next_fire_times as string[]) expect(['07:30', '08:30']).toContain(t.slice(11, 16));

    // Another tenant sees none of it.
    const key = (await c.ok('POST', '/hecate/v1/api-keys', { name: 'globex', scopes: ['operator'], tenant_id: 'globex' })).secret as string;
    const globex = new Client(c.url, key);
    for (const [method, path] of [
      ['GET', `/hecate/v1/schedules/${daily.id}`],
      ['PATCH', `/hecate/v1/schedules/${daily.id}`],
      ['POST', `/hecate/v1/schedules/${daily.id}/pause`],
      ['GET', `/hecate/v1/schedules/${daily.id}/firings`],
      ['DELETE', `/hecate/v1/schedules/${daily.id}`],
    ]) {
      const r = await globex.call(method, path, method === 'PATCH' ? { name: 'mine' } : undefined);
      expect({ path, status: r.status, type: r.body.error?.type }).toEqual({ path, status: 404, type: 'not_found' });
    }
    expect((await globex.ok('GET', '/hecate/v1/schedules')) as unknown as Json[]).toEqual([]);
    // No credential, a foreign Origin, a hostile body: refused before anything is stored.
    const raw = (path: string, init: RequestInit) => fetch(`${c.url}${path}`, init);
    const body = JSON.stringify({ cron_expression: EVERY_SECOND, target: { type: 'task', task: TICK } });
    expect((await raw('/hecate/v1/schedules', { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    expect((await raw(`/hecate/v1/schedules/${daily.id}/pause`, { method: 'POST' })).status).toBe(401);
    const foreign = await raw('/hecate/v1/schedules', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' },
      body,
    });
    expect(foreign.status).toBe(403);
    for (const hostile of [
      { cron_expression: EVERY_SECOND, target: { type: 'task', task: { ...TICK, injected: true } } },
      { cron_expression: 'x'.repeat(201), target: { type: 'task', task: TICK } },
      { cron_expression: EVERY_SECOND, target: { type: 'task', task: TICK }, catch_up_max: 10_000 },
      { cron_expression: `* * * *\u0000 *`, target: { type: 'task', task: TICK } },
    ]) {
      const r = await c.call('POST', '/hecate/v1/schedules', hostile);
      expect({ status: r.status, type: r.body.error?.type }).toEqual({ status: 400, type: 'invalid_request' });
    }
    expect(((await c.ok('GET', '/hecate/v1/schedules')) as unknown as Json[]).map((x) => x.id)).toEqual([daily.id]);

    // A tenant key's fire gets the key's workspace rights: a host directory outside GATEWAY_WORKSPACE_ROOTS is refused when it fires.
    const hostile = await create(
      {
        run_at: new Date().toISOString(),
        target: { type: 'task', task: { execution_kind: 'shell', shell_command: 'cat /etc/hostname', working_directory: '/etc' } },
      },
      globex,
    );
    const refused = await waitFor(async () => (await firings(hostile.id, globex)).find((f) => f.status !== 'pending'), { what: 'the refused fire' });
    expect(refused).toMatchObject({ status: 'failed', task_id: null, run_id: null, error: { type: 'invalid_request' } });
    expect((await globex.ok('GET', '/hecate/v1/tasks')) as unknown as Json[]).toEqual([]);

    // Every second, three times: three fires, three tasks run to the end, then the schedule completes.
    const s = await create({ cron_expression: EVERY_SECOND, max_fires: 3, target: { type: 'task', task: TICK } });
    expect(s.next_fire_times).toHaveLength(3);
    const done = await settled(s.id, 3);
    expect(done.map((f) => f.status)).toEqual(['fired', 'fired', 'fired']);
    const slots = done.map((f) => Date.parse(f.scheduled_for as string)).sort();
    expect([slots[1] - slots[0], slots[2] - slots[1]]).toEqual([1000, 1000]);
    for (const f of done) expect(await c.waitStatus(f.task_id as string, f.run_id as string, ['completed'])).toMatchObject({ status: 'completed' });
    // Each run says which fire made it, once (the event is written with the run).
    for (const f of done) {
      const fired = (await c.events(f.task_id as string, f.run_id as string)).filter((e) => e.type === 'schedule.fired');
      expect(fired.map((e) => e.data)).toEqual([{ schedule_id: s.id, firing_id: f.id, scheduled_for: f.scheduled_for }]);
    }
    const finished = await waitFor(async () => {
      const got = (await c.ok('GET', `/hecate/v1/schedules/${s.id}`)) as Json;
      return got.status === 'completed' ? got : undefined;
    });
    expect(finished).toMatchObject({ fire_count: 3, next_fire_at: null, next_fire_times: [] });
    await exactlyOnce([s.id]);

    // Pause stops the fires; resume starts again from now; delete removes it with its history.
    const paused = await create({ cron_expression: EVERY_SECOND, paused: true, target: { type: 'task', task: TICK } });
    expect(paused).toMatchObject({ status: 'paused', next_fire_at: null, next_fire_times: [] });
    const resumed = (await c.ok('POST', `/hecate/v1/schedules/${paused.id}/resume`)) as Json;
    expect(resumed.status).toBe('active');
    await waitFor(async () => (await firings(paused.id)).some((f) => f.status === 'fired'), { what: 'a fire after resume' });
    expect(((await c.ok('POST', `/hecate/v1/schedules/${paused.id}/pause`)) as Json).status).toBe('paused');
    const count = (await settled(paused.id, 1)).length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(await firings(paused.id)).toHaveLength(count);
    expect(await c.ok('DELETE', `/hecate/v1/schedules/${paused.id}`)).toEqual({ id: paused.id, deleted: true });
    expect((await c.call('GET', `/hecate/v1/schedules/${paused.id}`)).status).toBe(404);
  }, 90_000);

  it('an Agent Chat target queues its message into the session once per fire, and each starts a turn there', async () => {
    const session = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' })).id as string;
    const bad = await c.call('POST', '/hecate/v1/schedules', {
      cron_expression: EVERY_SECOND,
      target: { type: 'agent_chat_message', session_id: 'acs_nope', content: 'hi' },
    });
    expect({ status: bad.status, type: bad.body.error?.type }).toEqual({ status: 404, type: 'not_found' });
    const s = await create({
      cron_expression: EVERY_SECOND,
      max_fires: 3,
      target: { type: 'agent_chat_message', session_id: session, content: 'scheduled hello' },
    });
    expect(s.target).toEqual({ type: 'agent_chat_message', session_id: session, content: 'scheduled hello' });
    await settled(s.id, 3);
    const done = await waitFor(
      async () => {
        const list = await firings(s.id);
        return list.every((f) => f.status === 'fired' && f.turn_id) ? list : undefined;
      },
      { timeoutMs: 30_000, what: 'a turn started by each fire' },
    );
    expect(done.map((f) => f.session_id)).toEqual([session, session, session]);
    expect(new Set(done.map((f) => f.turn_id)).size).toBe(3);
    const messages = await waitFor(
      async () => {
        const got = (await c.ok('GET', `/hecate/v1/agent-chat/sessions/${session}`)).messages as Json[];
        return got.filter((m) => m.role === 'assistant' && m.status === 'completed').length === 3 ? got : undefined;
      },
      { timeoutMs: 30_000, what: 'three answered turns' },
    );
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['scheduled hello', 'scheduled hello', 'scheduled hello']);
  }, 90_000);

  it('a worker killed while it starts a fire: the other takes the firing over after the lease, and each fire time starts one task with one run', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push((await create({ cron_expression: EVERY_SECOND, catch_up: 'all', catch_up_max: 100, target: { type: 'task', task: TICK } })).id);
    const session = (await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' })).id as string;
    const chat = (
      await create({
        cron_expression: EVERY_SECOND,
        catch_up: 'all',
        catch_up_max: 100,
        target: { type: 'agent_chat_message', session_id: session, content: 'tick' },
      })
    ).id as string;
    const [victim, survivor] = workers;
    // Caught in the act: a firing the victim has claimed and not finished.
    const caught = await waitFor(
      async () => {
        const { rows } = await pg.query<{ id: string }>(`SELECT id FROM schedule_firings WHERE status = 'pending' AND claim_owner LIKE $1 LIMIT 1`, [
          `%:${victim.proc.pid}:%`,
        ]);
        if (rows.length === 0) return undefined;
        await victim.stop('SIGKILL');
        return rows[0].id;
      },
      { timeoutMs: 20_000, intervalMs: 2, what: 'the victim holding a firing' },
    );
    const [{ status: atKill }] = await sql<{ status: string }>(db.url, 'SELECT status FROM schedule_firings WHERE id = $1', [caught]);
    // The survivor takes the caught firing over once the victim's claim expires (fires go on meanwhile); then all is settled.
    await waitFor(async () => (await sql(db.url, `SELECT 1 FROM schedule_firings WHERE id = $1 AND status <> 'pending'`, [caught])).length > 0, {
      timeoutMs: LEASE_MS * 5,
      what: 'the caught firing taken over',
    });
    for (const id of ids) await c.ok('POST', `/hecate/v1/schedules/${id}/pause`);
    await waitFor(async () => (await sql(db.url, `SELECT 1 FROM schedule_firings WHERE status = 'pending' AND schedule_id = ANY($1)`, [ids])).length === 0, {
      timeoutMs: 15_000,
      what: 'no firing left pending',
    });
    const [taken] = await sql<{ status: string; attempts: number; claim_owner: string; task_id: string }>(
      db.url,
      'SELECT status, attempts, claim_owner, task_id FROM schedule_firings WHERE id = $1',
      [caught],
    );
    // The victim died holding it (SIGKILL follows the read within a millisecond; starting a task takes tens): the survivor finished it, once.
    expect(atKill).toBe('pending');
    expect(taken).toMatchObject({ status: 'fired', attempts: 2 });
    expect(taken.claim_owner).toContain(`:${survivor.proc.pid}:`);
    const [{ run_id: takenRun }] = await sql<{ run_id: string }>(db.url, 'SELECT run_id FROM schedule_firings WHERE id = $1', [caught]);
    const takenEvents = await c.events(taken.task_id, takenRun);
    expect(takenEvents.filter((e) => e.type === 'schedule.fired').map((e) => e.data.firing_id)).toEqual([caught]);
    const rows = await exactlyOnce(ids);
    // No fire time of any schedule was lost: per schedule, consecutive seconds from its first fire to its last.
    for (const id of ids) {
      const slots = (
        await sql<{ t: Date }>(db.url, `SELECT scheduled_for AS t FROM schedule_firings WHERE schedule_id = $1 AND status = 'fired' ORDER BY 1`, [id])
      ).map((r) => r.t.getTime());
      expect(slots.length).toBeGreaterThan(2);
      expect(slots.slice(1).map((t, i) => t - slots[i])).toEqual(slots.slice(1).map(() => 1000));
    }
    for (const r of rows.slice(0, 5)) expect((await c.ok('GET', `/hecate/v1/tasks/${r.task_id}`)).status).toMatch(/queued|running|completed/);
    // The Agent Chat schedule: one user message per fire, once its queue has run (nothing queued twice).
    await c.ok('POST', `/hecate/v1/schedules/${chat}/pause`);
    const chatFires = (await settled(chat, 1)).filter((f) => f.status === 'fired').length;
    const userMessages = async () =>
      ((await c.ok('GET', `/hecate/v1/agent-chat/sessions/${session}`)).messages as Json[]).filter((m) => m.role === 'user').length;
    await waitFor(async () => (await userMessages()) >= chatFires, { timeoutMs: 30_000, what: 'a turn per Agent Chat fire' });
    expect(await sql(db.url, `SELECT 1 FROM agent_chat_queue WHERE session_id = $1 AND status IN ('queued', 'starting')`, [session])).toEqual([]);
    expect(await userMessages()).toBe(chatFires);
    workers = [survivor, await procs.start('worker', env)];
  }, 90_000);

  it('a worker stalled past its claim resumes after the takeover and starts nothing again', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push((await create({ cron_expression: EVERY_SECOND, catch_up: 'all', catch_up_max: 100, target: { type: 'task', task: TICK } })).id);
    const [stalled] = workers;
    const caught = await waitFor(
      async () => {
        const { rows } = await pg.query<{ id: string }>(`SELECT id FROM schedule_firings WHERE status = 'pending' AND claim_owner LIKE $1 LIMIT 1`, [
          `%:${stalled.proc.pid}:%`,
        ]);
        if (rows.length === 0) return undefined;
        process.kill(stalled.proc.pid!, 'SIGSTOP');
        return rows[0].id;
      },
      { timeoutMs: 20_000, intervalMs: 2, what: 'the worker holding a firing' },
    );
    try {
      await waitFor(async () => (await sql(db.url, `SELECT 1 FROM schedule_firings WHERE id = $1 AND status <> 'pending'`, [caught])).length > 0, {
        timeoutMs: 15_000,
        what: 'the firing settled while its first worker is stopped',
      });
    } finally {
      process.kill(stalled.proc.pid!, 'SIGCONT');
    }
    const [taken] = await sql<{ status: string; attempts: number; claim_owner: string }>(
      db.url,
      'SELECT status, attempts, claim_owner FROM schedule_firings WHERE id = $1',
      [caught],
    );
    expect(taken).toMatchObject({ status: 'fired', attempts: 2 });
    expect(taken.claim_owner).not.toContain(`:${stalled.proc.pid}:`);
    // The stalled worker goes on where it stopped (it may create or start the same task): nothing is made twice.
    await new Promise((r) => setTimeout(r, 1500));
    for (const id of ids) await c.ok('POST', `/hecate/v1/schedules/${id}/pause`);
    await waitFor(async () => (await sql(db.url, `SELECT 1 FROM schedule_firings WHERE status = 'pending' AND schedule_id = ANY($1)`, [ids])).length === 0, {
      timeoutMs: 15_000,
      what: 'no firing left pending',
    });
    await exactlyOnce(ids);
  }, 90_000);

  it("fire times missed while no worker ran follow each schedule's catch-up policy", async () => {
    const skip = await create({ cron_expression: EVERY_SECOND, catch_up: 'skip', target: { type: 'task', task: TICK } });
    const once = await create({ cron_expression: EVERY_SECOND, catch_up: 'once', target: { type: 'task', task: TICK } });
    const all = await create({ cron_expression: EVERY_SECOND, catch_up: 'all', catch_up_max: 2, target: { type: 'task', task: TICK } });
    const ids = [skip.id, once.id, all.id];
    await waitFor(async () => (await Promise.all(ids.map((id) => firings(id)))).every((l) => l.some((f) => f.status === 'fired')), { what: 'a fire of each' });
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    const downAt = Date.now();
    await new Promise((r) => setTimeout(r, 5000));
    const before = new Map(await Promise.all(ids.map(async (id) => [id, (await firings(id)).length] as const)));
    workers = [await procs.start('worker', env)];
    const after = async (id: string) => {
      const list = await waitFor(
        async () => {
          const l = await firings(id);
          return l.some((f) => f.status === 'skipped') && l.every((f) => f.status !== 'pending') ? l : undefined;
        },
        { timeoutMs: 20_000, what: `the catch-up pass of ${id}` },
      );
      return list.slice(0, list.length - before.get(id)!).reverse();
    };
    // Each list: the firings written from the first pass after the restart on, oldest first.
    const missedNote = /fire times? from .* passed without a fire \(catch_up (skip|once|all)\)/;
    const [skipped, caughtOnce, caughtAll] = await Promise.all(ids.map(after));
    for (const [list, policy, caughtUp] of [
      [skipped, 'skip', 0],
      [caughtOnce, 'once', 1],
      [caughtAll, 'all', 2],
    ] as const) {
      const note = list.find((f) => f.status === 'skipped')!;
      expect(note.error).toMatchObject({ type: 'missed_fire_times', message: expect.stringMatching(missedNote) });
      expect(note.error.message).toContain(`catch_up ${policy}`);
      const missedFires = list.filter((f) => f.status === 'fired' && Date.parse(f.scheduled_for as string) < Date.parse(note.created_at as string) - 1500);
      expect({ policy, caughtUp: missedFires.length }).toEqual({ policy, caughtUp });
      // Caught-up fires are the newest missed fire times, after the passed-over ones.
      for (const f of missedFires) expect(Date.parse(f.scheduled_for as string)).toBeGreaterThan(Date.parse(note.scheduled_for as string));
      expect(Date.parse(note.scheduled_for as string)).toBeGreaterThan(downAt - 2000);
    }
    for (const id of ids) await c.ok('POST', `/hecate/v1/schedules/${id}/pause`);
    await exactlyOnce(ids);
  }, 90_000);
});
