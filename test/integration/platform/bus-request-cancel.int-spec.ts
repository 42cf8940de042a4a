import { BusCancels, busChannels, busRequest, type EventBus } from '@core/bus';
import { busAdapters, type BusHarness } from '../../support/bus-adapters';
import { uniqueId, waitFor } from '../../support/infra';

/** Subscriptions a bus holds now (the adapters' own bookkeeping; 0 means every request cleaned up). */
const held = (bus: EventBus): number => {
  const b = bus as unknown as { subs?: Set<unknown>; handlers?: Map<string, unknown> };
  return b.subs?.size ?? b.handlers?.size ?? 0;
};

describe.each(busAdapters)('bus request/reply and cancels (%s)', (_name, make) => {
  let h: BusHarness;
  beforeEach(async () => (h = await make()));
  afterEach(() => h.close());

  it('answers with the first reply, typed, and unsubscribes', async () => {
    await h.bus.listen(busChannels.mcpCacheRequest, ({ id }) => {
      void h.bus.send(busChannels.mcpCacheReply.of(id), { worker: 'w1', entries: 2, in_use: 1, idle: 1 });
    });
    const before = held(h.bus);
    const id = uniqueId('req');
    const replies = await busRequest(h.bus, {
      reply: busChannels.mcpCacheReply.of(id),
      send: () => h.bus.send(busChannels.mcpCacheRequest, { id }),
      timeoutMs: 5_000,
    });
    expect(replies).toEqual([{ worker: 'w1', entries: 2, in_use: 1, idle: 1 }]);
    expect(held(h.bus)).toBe(before);
  });

  it('collects until enough or the timeout, drops what accept refuses, and is empty when nobody answers', async () => {
    for (const worker of ['w1', 'w2', 'w3']) {
      await h.bus.listen(busChannels.mcpCacheRequest, ({ id }) => {
        void h.bus.send(busChannels.mcpCacheReply.of(id), { worker, entries: 0, in_use: 0, idle: 0 });
      });
    }
    const ask = (accept: (w: string) => boolean, enough: (n: number) => boolean, timeoutMs: number) => {
      const id = uniqueId('req');
      return busRequest(h.bus, {
        reply: busChannels.mcpCacheReply.of(id),
        send: () => h.bus.send(busChannels.mcpCacheRequest, { id }),
        timeoutMs,
        accept: (r) => accept(r.worker),
        enough: (kept) => enough(kept.length),
      });
    };
    const started = Date.now();
    const two = await ask(
      (w) => w !== 'w2',
      (n) => n >= 2,
      5_000,
    );
    expect(two.map((r) => r.worker).sort()).toEqual(['w1', 'w3']);
    expect(Date.now() - started).toBeLessThan(4_000);
    const all = await ask(
      () => true,
      () => false,
      300,
    );
    expect(all.map((r) => r.worker).sort()).toEqual(['w1', 'w2', 'w3']);

    const silent = await busRequest(h.bus, { reply: busChannels.chatStopped.of(uniqueId('s')), send: async () => undefined, timeoutMs: 50 });
    expect(silent).toEqual([]);
  });

  it('ends the wait when the poll says done, and unsubscribes when send fails', async () => {
    let polls = 0;
    const replies = await busRequest(h.bus, {
      reply: busChannels.chatStopped.of(uniqueId('s')),
      send: async () => undefined,
      timeoutMs: 5_000,
      poll: { everyMs: 20, done: async () => ++polls >= 3 },
    });
    expect(replies).toEqual([]);
    expect(polls).toBe(3);
    const before = held(h.bus);
    await expect(
      busRequest(h.bus, { reply: busChannels.chatStopped.of(uniqueId('s')), send: () => Promise.reject(new Error('bus down')), timeoutMs: 1_000 }),
    ).rejects.toThrow('bus down');
    expect(held(h.bus)).toBe(before);
  });

  it('a cancel from another holder of the bus reaches the registered item only, once per kind subscription', async () => {
    const worker = new BusCancels(h.bus, busChannels.runCancel);
    const api = new BusCancels(h.bus, busChannels.runCancel);
    const cancelled: string[] = [];
    const unregister = worker.register('r1', () => cancelled.push('r1'));
    worker.register('r2', () => cancelled.push('r2'));
    await worker.listen();
    expect(worker.size).toBe(2);
    await api.cancel('r1', { runId: 'r1' });
    await waitFor(() => cancelled.length === 1, { what: 'the cancel' });
    expect(cancelled).toEqual(['r1']);
    unregister();
    await api.cancel('r1', { runId: 'r1' });
    await api.cancel('r2', { runId: 'r2' });
    await waitFor(() => cancelled.length === 2, { what: 'the second cancel' });
    expect(cancelled).toEqual(['r1', 'r2']);
    expect(worker.cancelHere('r2')).toBe(true);
    expect(worker.cancelHere('r1')).toBe(false);
    await worker.close();
    await api.cancel('r2', { runId: 'r2' });
    // A negative: a closed worker must not hear this cancel (no event marks "not delivered"; a bus hop takes ~1 ms).
    await new Promise((r) => setTimeout(r, 100));
    expect(cancelled).toEqual(['r1', 'r2', 'r2']);
  });

  it('a kind keyed by its payload cancels by the payload, and a re-registered key keeps its newer holder', async () => {
    const stops = new BusCancels(h.bus, busChannels.chatStop, (m) => m.generation_id);
    const got: string[] = [];
    const first = stops.register('g1', () => got.push('old'));
    stops.register('g1', () => got.push('new'));
    first();
    await stops.listen();
    await stops.cancel('session-1', { generation_id: 'g1' });
    await waitFor(() => got.length === 1, { what: 'the stop' });
    expect(got).toEqual(['new']);
    await stops.close();
  });
});
