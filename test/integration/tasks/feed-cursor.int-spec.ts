import type { EventEnvelope } from '@contracts/events';
import { openRuntime, RuntimeHarness } from './runtime-harness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * docs/design.md §4.2: a reader polling `after_sequence=N` on the public feed never misses an event that commits
 * later with a smaller cursor, and never sees one twice — with 8 writers whose transactions commit out
 * of order (each holds its transaction open a random while after appending).
 */
describe.each(['postgres', 'pglite'] as const)('public feed cursor under concurrent writers (%s)', (backend) => {
  let h: RuntimeHarness;
  beforeAll(async () => (h = await openRuntime(backend)), 60_000);
  afterAll(() => h?.close());

  it('a poller with after_sequence sees every event exactly once, in cursor order', async () => {
    const writers = 8;
    const perWriter = backend === 'postgres' ? 40 : 15;
    const tenantId = `feed-${backend}`;
    const written = new Set<string>();
    let writing = true;

    const writer = async (w: number) => {
      const runId = `run_feed_${backend}_${w}`;
      for (let i = 0; i < perWriter; i++) {
        await h.events.transaction(async (tx) => {
          const e = await tx.emit({ tenantId, runId, taskId: `task_feed_${w}`, type: 'external.event', data: { w, i } });
          written.add(e.event_id);
          // Keep the transaction open so commits interleave out of append order.
          await sleep(Math.floor(Math.random() * (backend === 'postgres' ? 12 : 3)));
        }, null);
      }
    };

    const seen: EventEnvelope[] = [];
    let cursor = 0;
    const poll = async () => {
      const page = await h.events.listFeed({ tenantId }, cursor, 7);
      for (const e of page.events) {
        expect(Number(e.cursor)).toBeGreaterThan(cursor);
        cursor = Number(e.cursor);
        seen.push(e);
      }
      return page.events.length;
    };
    const poller = (async () => {
      while (writing) {
        await poll();
        await sleep(2);
      }
    })();
    await Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
    writing = false;
    await poller;
    await h.events.flushFeed();
    while ((await poll()) > 0);

    const ids = seen.map((e) => e.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(writers * perWriter);
    expect(new Set(ids)).toEqual(written);
    // Within each run the feed keeps the run's order, gap-free (`run_sequence`; the feed's `sequence` is its cursor).
    expect(seen.every((e) => e.sequence === Number(e.cursor))).toBe(true);
    for (let w = 0; w < writers; w++) {
      const seqs = seen.filter((e) => e.run_id === `run_feed_${backend}_${w}`).map((e) => e.run_sequence);
      expect(seqs).toEqual(Array.from({ length: perWriter }, (_, i) => i + 1));
    }
  });

  it('filters by event type (csv) and task, and hides other tenants', async () => {
    const tenantId = `filter-${backend}`;
    await h.events.transaction(async (tx) => {
      await tx.emit({ tenantId, runId: 'run_f1', taskId: 'task_x', type: 'run.created' });
      await tx.emit({ tenantId, runId: 'run_f1', taskId: 'task_x', type: 'run.queued' });
      await tx.emit({ tenantId, runId: 'run_f2', taskId: 'task_y', type: 'run.created' });
      await tx.emit({ tenantId: 'someone-else', runId: 'run_f3', taskId: 'task_x', type: 'run.created' });
    }, null);
    await h.events.flushFeed();
    const byType = await h.events.listFeed({ tenantId, types: ['run.queued', 'run.created'], taskId: 'task_x' }, 0, 50);
    expect(byType.events.map((e) => [e.run_id, e.type])).toEqual([
      ['run_f1', 'run.created'],
      ['run_f1', 'run.queued'],
    ]);
    const all = await h.events.listFeed({ tenantId }, 0, 50);
    expect(all.events.map((e) => e.run_id)).not.toContain('run_f3');
  });
});
