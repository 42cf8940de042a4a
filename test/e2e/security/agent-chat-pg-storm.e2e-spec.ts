import { Client as PgClient } from 'pg';
import { type ScratchDatabase, sql, waitFor } from '../../support/infra';
import { providerEnv } from '../../support/provider-env';
import type { ServerProcess } from '../../support/server-process';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream/fake-upstream.js';
import { Client, Json, Processes, scaledEnv } from '../tasks/tasks-harness';

const TURNS = 24;

/** The median time, over ten tries, to open a connection to `url` and run one statement on it. */
async function connectAndQueryMs(url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const start = performance.now();
    const client = new PgClient({ connectionString: url });
    await client.connect();
    await client.query('SELECT 1');
    times.push(performance.now() - start);
    await client.end();
  }
  return times.sort((a, b) => a - b)[5];
}
const SESSIONS = 4;

/**
 * A pg_terminate_backend storm on the worker's connections (application_name hecate-worker, this suite's scratch
 * database only) while Agent Chat model turns stream: every turn's writes (claim, inputs, partials, the end) retry
 * transient connection errors like the run writes, so every turn completes with its whole reply.
 */
describe('Agent Chat turns under a pg_terminate_backend storm (scaled: api + worker)', () => {
  const procs = new Processes();
  let upstream: FakeUpstream;
  let db: ScratchDatabase;
  let api: ServerProcess;
  let worker: ServerProcess;
  let c: Client;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ models: ['gpt-4o-mini'] });
    const scaled = await scaledEnv({ ...providerEnv('fake', upstream, { kind: 'local' }), GATEWAY_TASK_QUEUE_LEASE_SECONDS: '5' });
    db = scaled.db;
    [api, worker] = await Promise.all([procs.start('api', scaled.env), procs.start('worker', scaled.env)]);
    c = new Client(api.url);
  }, 120_000);
  afterAll(async () => {
    await procs.stopAll();
    await upstream?.close();
    await db?.drop();
  });

  it(`${TURNS} streamed turns on ${SESSIONS} sessions while the worker's connections are terminated every few ms: all complete`, async () => {
    const reply = 'one two three four five six seven eight';
    upstream.script({ content: reply, chunks: 8, chunkIntervalMs: 25, times: Infinity });
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++)
      sessions.push((await c.ok('POST', '/hecate/v1/agent-chat/sessions', { runtime_kind: 'model', model: 'gpt-4o-mini' })).id);

    // The storm's period: 15 ms, or longer on a machine where a fresh connection and one short statement take longer
    // (twice the median of ten, measured now): each worker connection lives about one period, long enough for one
    // transaction of a turn and rarely for two. A fixed 15 ms on a slow machine is a total outage, not a storm.
    const stormMs = Math.max(15, 2 * (await connectAndQueryMs(db.url)));
    const killer = new PgClient({ connectionString: db.url });
    await killer.connect();
    let killing = true;
    let killed = 0;
    const storm = (async () => {
      while (killing) {
        const r = await killer.query(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'hecate-worker' AND pid <> pg_backend_pid()`,
        );
        killed += (r.rows[0] as { n: number }).n;
        await new Promise((res) => setTimeout(res, stormMs));
      }
    })();
    try {
      // Each session runs its turns one after another (the next prompt once the previous turn ended).
      await Promise.all(
        sessions.map(async (id) => {
          for (let t = 0; t < TURNS / SESSIONS; t++) {
            const r = await c.call('POST', `/hecate/v1/agent-chat/sessions/${id}/messages`, { content: `turn ${t}`, wait: false });
            expect(r.status).toBe(202);
            await waitFor(
              async () => {
                const s = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
                return s.active_turn ? undefined : true;
              },
              { timeoutMs: 60_000, intervalMs: 50, what: `turn ${t} of ${id} to end` },
            ).catch(async (err: unknown) => {
              const rows = await sql(db.url, `SELECT id, status, attempts, lease_owner, lease_expires_at, error FROM agent_chat_turns WHERE session_id = $1`, [
                id,
              ]);
              const logs = worker
                .output()
                .split('\n')
                .filter((l) => /"level":"(warn|error)"/.test(l))
                .slice(-15)
                .join('\n');
              throw new Error(`${String(err)}\n${JSON.stringify(rows)}\n${logs}`);
            });
          }
        }),
      );
    } finally {
      killing = false;
      await storm;
      await killer.end();
    }
    expect(killed).toBeGreaterThan(0);
    console.log(`storm: a kill pass every ${stormMs.toFixed(0)} ms, ${killed} backends terminated`);
    const turns = await sql<{ status: string; error: string; n: number }>(
      db.url,
      `SELECT status, error_kind, error, count(*)::int AS n FROM agent_chat_turns GROUP BY status, error_kind, error ORDER BY status`,
    );
    // The worker's own account of a turn that did not complete (its stack names the write that gave up).
    const failures = worker
      .output()
      .split('\n')
      .filter((l) => /agent chat turn failed/.test(l));
    expect({ turns, failures }).toEqual({ turns: [{ status: 'completed', error_kind: '', error: '', n: TURNS }], failures: [] });
    for (const id of sessions) {
      const s = await c.ok('GET', `/hecate/v1/agent-chat/sessions/${id}`);
      const replies = (s.messages as Json[]).filter((m) => m.role === 'assistant').map((m) => [m.status, m.content]);
      expect(replies).toEqual(Array.from({ length: TURNS / SESSIONS }, () => ['completed', reply]));
    }
    expect(worker.proc.exitCode).toBeNull();
  });
});
