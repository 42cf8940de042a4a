import { RunFailedError, stopReason } from './editor-session';

const run = (status: string, error_kind?: string) => ({
  id: 'run_1',
  task_id: 'task_1',
  status,
  error_kind,
  last_error: error_kind ? `failed: ${error_kind}` : undefined,
});

describe('the stop reason of a prompt from its run', () => {
  it('completed → end_turn, or refusal / max_tokens when the last model call stopped so', () => {
    expect(stopReason({ run: run('completed'), modelStopReason: 'end_turn', rejected: false }, false)).toBe('end_turn');
    expect(stopReason({ run: run('completed'), modelStopReason: 'refusal', rejected: false }, false)).toBe('refusal');
    expect(stopReason({ run: run('completed'), modelStopReason: 'max_tokens', rejected: false }, false)).toBe('max_tokens');
  });

  it('cancelled → cancelled, unless the editor rejected a call (the turn ended by its decision)', () => {
    expect(stopReason({ run: run('cancelled'), rejected: false }, true)).toBe('cancelled');
    expect(stopReason({ run: run('cancelled'), rejected: false }, false)).toBe('cancelled');
    expect(stopReason({ run: run('cancelled'), rejected: true }, false)).toBe('end_turn');
    expect(stopReason({ run: run('cancelled'), rejected: true }, true)).toBe('cancelled');
  });

  it('the turn cap → max_turn_requests; any other failure throws with the run (its error_kind becomes data.type)', () => {
    expect(stopReason({ run: run('failed', 'turn_limit_exceeded'), rejected: false }, false)).toBe('max_turn_requests');
    const failure = (() => {
      try {
        return stopReason({ run: run('failed', 'budget_exceeded'), rejected: false }, false);
      } catch (err) {
        return err;
      }
    })();
    expect(failure).toBeInstanceOf(RunFailedError);
    expect((failure as RunFailedError).run.error_kind).toBe('budget_exceeded');
    expect((failure as Error).message).toContain('failed: budget_exceeded');
  });
});
