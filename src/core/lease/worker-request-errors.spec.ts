import { NO_WORKER_OPERATOR_ACTION, noWorkerAnswered } from './worker-request-errors';

// How a worker's error is stored on its row and raised again: the lossless envelope of core/http/error-envelope.spec.ts.
describe('worker request errors', () => {
  it('the one no-worker error: 503 service_unavailable with the one operator action', () => {
    const e = noWorkerAnswered('no worker did it', { userMessage: 'It did not run.', details: { operation: 'x' } });
    expect({ type: e.type, status: e.status, message: e.message, user: e.userMessage, op: e.operatorAction, details: e.details }).toEqual({
      type: 'service_unavailable',
      status: 503,
      message: 'no worker did it',
      user: 'It did not run.',
      op: NO_WORKER_OPERATOR_ACTION,
      details: { operation: 'x' },
    });
  });
});
