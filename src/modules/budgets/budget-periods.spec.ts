import { newlyReached, resetsAt, windowStart } from './budget-periods';

describe('budget periods', () => {
  const at = new Date('2026-11-28T17:45:12.345Z'); // a Saturday

  it('starts each window at the UTC calendar boundary', () => {
    expect(windowStart('day', at).toISOString()).toBe('2026-11-28T00:00:00.000Z');
    expect(windowStart('week', at).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(windowStart('month', at).toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(windowStart('total', at).toISOString()).toBe('1970-01-01T00:00:00.000Z');
  });

  it('puts a Sunday in the week that began the Monday before, and a Monday in its own', () => {
    expect(windowStart('week', new Date('2026-11-29T23:59:59Z')).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(windowStart('week', new Date('2026-11-30T00:00:00Z')).toISOString()).toBe('2026-11-30T00:00:00.000Z');
  });

  it('resets at the next boundary (months of any length, the year end); a total budget never', () => {
    expect(resetsAt('day', windowStart('day', at))?.toISOString()).toBe('2026-11-29T00:00:00.000Z');
    expect(resetsAt('week', windowStart('week', at))?.toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(resetsAt('month', new Date('2026-12-01T00:00:00Z'))?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(resetsAt('month', new Date('2027-02-01T00:00:00Z'))?.toISOString()).toBe('2027-03-01T00:00:00.000Z');
    expect(resetsAt('total', windowStart('total', at))).toBeNull();
  });

  it('names each threshold once, when spend reaches it', () => {
    expect(newlyReached([80, 50], [], 499_999, 1_000_000)).toEqual([]);
    expect(newlyReached([80, 50], [], 500_000, 1_000_000)).toEqual([50]);
    expect(newlyReached([80, 50], [50], 900_000, 1_000_000)).toEqual([80]);
    expect(newlyReached([80, 50], [], 2_000_000, 1_000_000)).toEqual([50, 80]);
    expect(newlyReached([80, 50], [50, 80], 2_000_000, 1_000_000)).toEqual([]);
  });
});
