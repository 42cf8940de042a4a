import { PeriodicPass } from './periodic-pass';

describe('PeriodicPass', () => {
  it('runs one pass at a time, keeps going after a failed one, and stop waits for the pass in flight', async () => {
    let calls = 0;
    let release: () => void = () => undefined;
    const pass = new PeriodicPass('test pass', async () => {
      calls++;
      if (calls === 1) throw new Error('boom');
      await new Promise<void>((r) => (release = r));
    });
    await pass.run();
    expect(calls).toBe(1);
    const second = pass.run();
    await pass.run(); // skipped: the second is still running
    expect(calls).toBe(2);
    let stopped = false;
    const stop = pass.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect([pass.stopped, stopped]).toEqual([true, false]);
    release();
    await Promise.all([second, stop]);
    expect(stopped).toBe(true);
    await pass.run();
    expect(calls).toBe(2);
  });
});
