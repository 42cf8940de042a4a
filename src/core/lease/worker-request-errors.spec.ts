import { ConflictError, DomainError } from '@core/http/domain-error';
import { NO_WORKER_OPERATOR_ACTION, noWorkerAnswered, raiseWorkerError, storeWorkerError } from './worker-request-errors';

describe('worker request errors', () => {
  it('a DomainError survives the stored envelope (through JSON) field for field', () => {
    const thrown = new ConflictError('drifted', { details: { paths: ['a'], n: 1 }, headers: { 'retry-after': '2' } }, 'patch_conflict');
    const { stored, internal } = storeWorkerError(thrown);
    expect(internal).toBe(false);
    const raised = raiseWorkerError(JSON.parse(JSON.stringify(stored)));
    expect(raised).toBeInstanceOf(DomainError);
    for (const field of ['type', 'status', 'message', 'userMessage', 'operatorAction', 'details', 'headers'] as const) {
      expect(raised[field]).toEqual(thrown[field]);
    }
  });

  it('an envelope stored before headers were kept raises with none', () => {
    const raised = raiseWorkerError({ type: 'conflict', status: 409, message: 'm', user_message: 'u', operator_action: 'o', details: {} });
    expect(raised.headers).toEqual({});
  });

  it('anything else is an internal error', () => {
    const { stored, internal } = storeWorkerError(new Error('boom'));
    expect(internal).toBe(true);
    expect(stored.status).toBe(500);
  });

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
