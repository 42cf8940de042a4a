import { randomUUID } from 'node:crypto';
import { RUN_LEASE } from '@modules/tasks/task-run.repository';
import { openRuntime, RuntimeHarness } from './runtime-harness';

/** docs/design.md §4.4: the run lease is a compare-and-set in Postgres time; every worker write proves the token. */
describe.each(['postgres', 'pglite'] as const)('run lease (%s)', (backend) => {
  let h: RuntimeHarness;
  beforeAll(async () => (h = await openRuntime(backend)), 60_000);
  afterAll(() => h?.close());

  const claim = (runId: string, tenantId: string, token: string, leaseMs = 30_000, maxConcurrent = 0) =>
    h.events.transaction((tx) => h.runs.claim(tx.manager, { tenantId, runId, owner: `w-${token.slice(0, 4)}`, token, leaseMs, maxConcurrent }), null);

  it('20 parallel claims of one run: exactly one winner', async () => {
    const run = await h.queuedRun();
    const tokens = Array.from({ length: 20 }, () => randomUUID());
    const results = await Promise.all(tokens.map((t) => claim(run.id, run.tenantId, t)));
    const winners = results.filter((r) => 'previousStatus' in r);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => !('previousStatus' in r)).every((r) => 'reason' in r && r.reason === 'lease_held')).toBe(true);
    const row = await h.runs.findById(run.tenantId, run.id);
    expect(row).toMatchObject({ status: 'running', attempts: 1 });
    expect(tokens).toContain(row!.leaseToken);
  });

  it('a taken-over lease rejects the old owner: heartbeat and guarded writes fail, the new owner proceeds', async () => {
    const run = await h.queuedRun();
    const first = randomUUID();
    const second = randomUUID();
    await claim(run.id, run.tenantId, first, 30_000);
    expect(await h.runs.heartbeat(run.id, first, 30_000)).toBe(true);
    expect(await h.runs.heartbeat(run.id, second, 30_000)).toBe(false);
    // While the lease is live nobody else gets it.
    expect(await claim(run.id, run.tenantId, second)).toMatchObject({ reason: 'lease_held' });
    // Expire it in database time, as if the first worker stopped heartbeating.
    await h.dataSource.query(`UPDATE task_runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [run.id]);
    const takeover = await claim(run.id, run.tenantId, second);
    expect(takeover).toMatchObject({ previousStatus: 'running', run: { attempts: 2, leaseToken: second } });
    expect(await h.runs.heartbeat(run.id, first, 30_000)).toBe(false);
    expect(await h.dataSource.transaction((m) => h.runs.guard(m, run.id, first))).toBe(false);
    expect(await h.dataSource.transaction((m) => h.runs.guard(m, run.id, second))).toBe(true);
  });

  it('a one-statement step write (guard + writes + events) lands only while the writer holds the lease', async () => {
    const run = await h.queuedRun();
    const first = randomUUID();
    const second = randomUUID();
    await claim(run.id, run.tenantId, first, 30_000);
    const write = (token: string, artifactId: string) =>
      h.events.appendGuarded(
        { sql: RUN_LEASE.guardSql('updated_at = now(), total_cost_micros_usd = total_cost_micros_usd + $3::bigint'), params: [run.id, token, 7] },
        [
          {
            sql: `INSERT INTO task_artifacts (id, tenant_id, task_id, run_id, kind, name, content_text) SELECT $1, $2, $3, $4, 'note', 'n', 'x' FROM g`,
            params: [artifactId, run.tenantId, run.taskId, run.id],
          },
        ],
        { tenantId: run.tenantId, runId: run.id, taskId: run.taskId },
        [
          { type: 'tool.completed', data: { n: 1 } },
          { type: 'turn.completed', data: { n: 2 } },
        ],
        null,
      );
    const sequences = (await h.events.listRun({ tenantId: run.tenantId, runId: run.id, afterSequence: 0, limit: 100 })).map((e) => e.sequence);
    const landed = await write(first, `art_${first}`);
    expect(landed!.map((e) => [e.type, e.sequence])).toEqual([
      ['tool.completed', (sequences.at(-1) ?? 0) + 1],
      ['turn.completed', (sequences.at(-1) ?? 0) + 2],
    ]);
    await h.dataSource.query(`UPDATE task_runs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [run.id]);
    await claim(run.id, run.tenantId, second);
    // The old owner's write: nothing of it is written (no artifact, no event, no sequence used, no spend).
    expect(await write(first, `art_${first}_late`)).toBeNull();
    expect(await h.dataSource.query(`SELECT id FROM task_artifacts WHERE run_id = $1 ORDER BY id`, [run.id])).toEqual([{ id: `art_${first}` }]);
    const after = await write(second, `art_${second}`);
    expect(after!.map((e) => e.sequence)).toEqual([landed![1].sequence + 1, landed![1].sequence + 2]);
    const [row] = await h.dataSource.query(`SELECT total_cost_micros_usd::int AS cost FROM task_runs WHERE id = $1`, [run.id]);
    expect(row.cost).toBe(14);
  });

  it('GATEWAY_TASK_MAX_CONCURRENT caps running runs across claimers', async () => {
    await h.dataSource.query(`UPDATE task_runs SET status = 'completed' WHERE status = 'running'`);
    const runs = await Promise.all([h.queuedRun('cap'), h.queuedRun('cap'), h.queuedRun('cap')]);
    const results = await Promise.all(runs.map((r) => claim(r.id, r.tenantId, randomUUID(), 30_000, 2)));
    expect(results.filter((r) => 'previousStatus' in r)).toHaveLength(2);
    expect(results.filter((r) => 'reason' in r && r.reason === 'at_capacity')).toHaveLength(1);
  });
});
