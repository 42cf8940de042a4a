import { settlesWithin, within } from './within';

describe('within', () => {
  it('gives the value when the promise wins, undefined when the time does; rejections pass through', async () => {
    expect(await within(Promise.resolve(7), 1000)).toBe(7);
    expect(await within(new Promise(() => undefined), 10)).toBeUndefined();
    await expect(within(Promise.reject(new Error('boom')), 1000)).rejects.toThrow('boom');
  });

  it('settlesWithin tells a void promise that resolved from one that did not', async () => {
    expect(await settlesWithin(Promise.resolve(undefined), 1000)).toBe(true);
    expect(await settlesWithin(new Promise(() => undefined), 10)).toBe(false);
  });
});
