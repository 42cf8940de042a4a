import { replayThenTail, TailBatch, TailSource } from './replay-tail';

/** A source over an in-memory "database" with a hand-driven bus. */
function fakeSource(initial: number[]) {
  const committed = [...initial];
  let listener: ((b: TailBatch<number>) => void) | undefined;
  let reconnect: (() => void) | undefined;
  const reads: number[] = [];
  const source: TailSource<number> = {
    read: async (after) => {
      reads.push(after);
      const items = committed.filter((n) => n > after).slice(0, 3);
      return { from: after + 1, to: items.length ? items[items.length - 1] : after, items, more: items.length === 3 };
    },
    subscribe: async (onBatch) => {
      listener = onBatch;
      return async () => {
        listener = undefined;
      };
    },
    onReconnect: (l) => {
      reconnect = l;
      return () => (reconnect = undefined);
    },
    positionOf: (n) => n,
  };
  return {
    source,
    reads,
    commit: (...ns: number[]) => committed.push(...ns),
    ring: (from: number, to: number, items = range(from, to)) => listener?.({ from, to, items }),
    reconnect: () => reconnect?.(),
    subscribed: () => listener !== undefined,
  };
}
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const tick = () => new Promise((r) => setImmediate(r));

describe('replayThenTail', () => {
  it('replays after the cursor in pages, then delivers live batches exactly once and in order', async () => {
    const f = fakeSource(range(1, 7));
    const got: number[] = [];
    let close!: () => void;
    const closed = new Promise<void>((r) => (close = r));
    const done = replayThenTail(f.source, { after: 2, closed, deliver: (items) => (got.push(...items), true) });
    await tick();
    expect(got).toEqual([3, 4, 5, 6, 7]);
    f.commit(8, 9);
    f.ring(8, 9);
    f.ring(8, 8); // duplicate doorbell
    await tick();
    expect(got).toEqual(range(3, 9));
    close();
    await done;
    expect(f.subscribed()).toBe(false);
  });

  it('refills from the store on a gap (lost doorbell) and on bus reconnect', async () => {
    const f = fakeSource([1]);
    const got: number[] = [];
    let close!: () => void;
    const closed = new Promise<void>((r) => (close = r));
    const done = replayThenTail(f.source, { after: 0, closed, deliver: (items) => (got.push(...items), true) });
    await tick();
    f.commit(2, 3, 4);
    f.ring(4, 4); // 2 and 3 were never rung
    await tick();
    await tick();
    expect(got).toEqual([1, 2, 3, 4]);
    f.commit(5);
    f.reconnect(); // 5 was committed while the bus was down
    await tick();
    await tick();
    expect(got).toEqual([1, 2, 3, 4, 5]);
    close();
    await done;
  });

  it('stops when delivery says so', async () => {
    const f = fakeSource(range(1, 5));
    const got: number[] = [];
    const end = await replayThenTail(f.source, { after: 0, closed: new Promise(() => undefined), deliver: (items) => (got.push(...items), false) });
    expect(got).toEqual([1, 2, 3]);
    expect(end).toBe(0);
  });
});
