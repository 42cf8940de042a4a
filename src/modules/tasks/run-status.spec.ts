import { assertTransition, canTransition, isActive, isTerminal, sourcesOf } from './run-status';

describe('run status machine', () => {
  it('allows the seed lifecycle and nothing out of a terminal state', () => {
    expect(canTransition('queued', 'running')).toBe(true);
    expect(canTransition('awaiting_approval', 'queued')).toBe(true);
    expect(canTransition('running', 'completed')).toBe(true);
    expect(canTransition('running', 'queued')).toBe(true); // lease reclaim
    for (const terminal of ['completed', 'failed', 'cancelled'] as const) {
      for (const to of ['queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const) {
        expect(canTransition(terminal, to)).toBe(false);
      }
    }
    expect(canTransition('awaiting_approval', 'running')).toBe(false);
  });

  it('answers 409 conflict for an invalid transition', () => {
    expect(() => assertTransition('run_1', 'completed', 'cancelled')).toThrow(expect.objectContaining({ status: 409, type: 'conflict' }));
    expect(() => assertTransition('run_1', 'queued', 'cancelled')).not.toThrow();
  });

  it('lists the sources of a target and classifies statuses', () => {
    expect(sourcesOf('cancelled').sort()).toEqual(['awaiting_approval', 'queued', 'running']);
    expect(isTerminal('failed')).toBe(true);
    expect(isActive('awaiting_approval')).toBe(true);
    expect(isActive('completed')).toBe(false);
  });
});
