import { backoffMs, matchesType } from './webhook-dispatcher.service';

describe('webhook dispatch rules', () => {
  it('backs off 1 s, 2 s, 4 s … up to an hour', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(30)).toBe(3_600_000);
  });

  it('matches exact types, families and *', () => {
    expect(matchesType('run.finished', 'run.finished')).toBe(true);
    expect(matchesType('run.finished', 'run.failed')).toBe(false);
    expect(matchesType('run.*', 'run.failed')).toBe(true);
    expect(matchesType('run.*', 'runner.started')).toBe(false);
    expect(matchesType('*', 'approval.requested')).toBe(true);
  });
});
