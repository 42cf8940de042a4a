import { cronProblem, nextFireAfter, nextFires, planDue, type ScheduleTiming, timezoneProblem } from './schedule-times';

const cron = (expression: string, extra: Partial<ScheduleTiming> = {}): ScheduleTiming => ({
  kind: 'cron',
  cronExpression: expression,
  timezone: 'UTC',
  runAt: null,
  startsAt: null,
  endsAt: null,
  maxFires: null,
  ...extra,
});
const at = (iso: string) => new Date(iso);
const iso = (d: Date[]) => d.map((x) => x.toISOString());

describe('schedule times', () => {
  it('checks expressions and time zones', () => {
    expect(cronProblem('0 9 * * 1-5')).toBeNull();
    expect(cronProblem('*/5 * * * * *')).toBeNull();
    expect(cronProblem('0 9 * *')).toMatch(/5 fields/);
    expect(cronProblem('0 25 * * *')).toMatch(/^cron_expression: /);
    expect(timezoneProblem('Europe/Berlin')).toBeNull();
    expect(timezoneProblem('Mars/Olympus')).toMatch(/not an IANA time zone/);
  });

  it('fires at wall-clock time in its zone, across a DST change as the cron library defines it', () => {
    const t = cron('30 9 * * *', { timezone: 'Europe/Berlin' });
    // 2026-03-29: CET (UTC+1) becomes CEST (UTC+2).
    expect(iso(nextFires(t, at('2026-03-27T12:00:00Z'), 3, 0))).toEqual(['2026-03-28T08:30:00.000Z', '2026-03-29T07:30:00.000Z', '2026-03-30T07:30:00.000Z']);
    // 02:30 does not exist that night in Berlin: the fire moves to the first time after the jump.
    expect(nextFireAfter(cron('30 2 * * *', { timezone: 'Europe/Berlin' }), at('2026-03-28T12:00:00Z'))?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
  });

  it('keeps to starts_at, ends_at and max_fires', () => {
    const t = cron('0 * * * *', { startsAt: at('2026-01-01T05:00:00Z'), endsAt: at('2026-01-01T07:00:00Z') });
    expect(iso(nextFires(t, at('2026-01-01T00:00:00Z'), 10, 0))).toEqual(['2026-01-01T05:00:00.000Z', '2026-01-01T06:00:00.000Z', '2026-01-01T07:00:00.000Z']);
    expect(iso(nextFires(cron('0 * * * *', { maxFires: 3 }), at('2026-01-01T00:00:00Z'), 10, 1))).toHaveLength(2);
    const once: ScheduleTiming = { ...cron(''), kind: 'once', cronExpression: null, runAt: at('2026-02-01T00:00:00Z') };
    expect(iso(nextFires(once, at('2026-01-01T00:00:00Z'), 5, 0))).toEqual(['2026-02-01T00:00:00.000Z']);
    expect(nextFireAfter(once, at('2026-02-01T00:00:00Z'))).toBeNull();
  });

  it('fires what is on time and follows the catch-up policy for what was missed', () => {
    const t = cron('0 * * * *');
    const state = { nextFireAt: at('2026-01-01T01:00:00Z'), fired: 0 };
    const now = at('2026-01-01T05:00:20Z');
    const policy = (catchUp: 'skip' | 'once' | 'all', catchUpMax = 1) => ({ catchUp, catchUpMax, graceMs: 60_000 });

    const skip = planDue(t, state, now, policy('skip'));
    expect(iso(skip.fire)).toEqual(['2026-01-01T05:00:00.000Z']);
    expect(skip.skipped).toMatchObject({ count: 4, first: at('2026-01-01T01:00:00Z'), last: at('2026-01-01T04:00:00Z'), capped: false });
    expect(skip.next?.toISOString()).toBe('2026-01-01T06:00:00.000Z');

    expect(iso(planDue(t, state, now, policy('once')).fire)).toEqual(['2026-01-01T04:00:00.000Z', '2026-01-01T05:00:00.000Z']);
    const all = planDue(t, state, now, policy('all', 3));
    expect(iso(all.fire)).toEqual(['2026-01-01T02:00:00.000Z', '2026-01-01T03:00:00.000Z', '2026-01-01T04:00:00.000Z', '2026-01-01T05:00:00.000Z']);
    expect(all.skipped?.count).toBe(1);
  });

  it('stops at max_fires and completes', () => {
    const t = cron('0 * * * *', { maxFires: 2 });
    const plan = planDue(t, { nextFireAt: at('2026-01-01T01:00:00Z'), fired: 1 }, at('2026-01-01T02:00:10Z'), {
      catchUp: 'all',
      catchUpMax: 5,
      graceMs: 60_000,
    });
    expect(iso(plan.fire)).toEqual(['2026-01-01T02:00:00.000Z']);
    expect(plan.skipped?.count).toBe(1);
    expect(plan.next).toBeNull();
  });

  it('caps what one pass enumerates after a long downtime', () => {
    const plan = planDue(cron('* * * * * *'), { nextFireAt: at('2026-01-01T00:00:00Z'), fired: 0 }, at('2026-01-02T00:00:00Z'), {
      catchUp: 'skip',
      catchUpMax: 1,
      graceMs: 1000,
    });
    expect(iso(plan.fire)).toEqual(['2026-01-01T23:59:59.000Z', '2026-01-02T00:00:00.000Z']);
    expect(plan.skipped).toMatchObject({ count: 1000, capped: true, first: at('2026-01-01T00:00:00Z'), last: at('2026-01-01T23:59:58Z') });
    expect(plan.next?.toISOString()).toBe('2026-01-02T00:00:01.000Z');
    const all = planDue(cron('* * * * * *'), { nextFireAt: at('2026-01-01T00:00:00Z'), fired: 0 }, at('2026-01-02T00:00:00Z'), {
      catchUp: 'all',
      catchUpMax: 3,
      graceMs: 1000,
    });
    expect(iso(all.fire)).toEqual([
      '2026-01-01T23:59:56.000Z',
      '2026-01-01T23:59:57.000Z',
      '2026-01-01T23:59:58.000Z',
      '2026-01-01T23:59:59.000Z',
      '2026-01-02T00:00:00.000Z',
    ]);
    expect(all.skipped).toMatchObject({ capped: true, last: at('2026-01-01T23:59:55Z') });
  });
});
