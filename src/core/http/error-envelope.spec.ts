import { ConflictError, DomainError } from './domain-error';
import { asDomainError, fromErrorEnvelope, toErrorEnvelope } from './error-envelope';
import { toDomainError } from './error-rendering';

const limit = new DomainError('rate_limit_exceeded', 429, 'too many', { userMessage: 'Slow down.', operatorAction: 'Wait.', details: { limit_scope: 'key' } });

describe('DomainError ↔ stored error envelope', () => {
  it('full, without details and brief keep their fields in the stored order', () => {
    expect(JSON.stringify(toErrorEnvelope(limit))).toBe(
      '{"type":"rate_limit_exceeded","message":"too many","user_message":"Slow down.","operator_action":"Wait.","status":429,"limit_scope":"key"}',
    );
    expect(JSON.stringify(toErrorEnvelope(limit, 'without-details'))).toBe(
      '{"type":"rate_limit_exceeded","message":"too many","user_message":"Slow down.","operator_action":"Wait.","status":429}',
    );
    expect(JSON.stringify(toErrorEnvelope(limit, 'brief'))).toBe('{"type":"rate_limit_exceeded","message":"too many"}');
  });

  it('anything that is not a DomainError takes the fallback made of its message', () => {
    const fallback = (m: string) => new DomainError('upstream_error', 502, m, { userMessage: 'The provider failed to answer.' });
    expect(asDomainError(limit, fallback)).toBe(limit);
    expect(toErrorEnvelope(asDomainError(new Error('socket hang up'), fallback))).toEqual({
      type: 'upstream_error',
      message: 'socket hang up',
      user_message: 'The provider failed to answer.',
      operator_action: '',
      status: 502,
    });
    expect(asDomainError('boom', fallback).message).toBe('boom');
  });

  it('a stored envelope is rethrown as the DomainError it was made from; what it lacks is an upstream 502', () => {
    const back = fromErrorEnvelope(toErrorEnvelope(limit));
    expect(back).toBeInstanceOf(DomainError);
    expect(back).toMatchObject({ type: 'rate_limit_exceeded', status: 429, message: 'too many', userMessage: 'Slow down.', operatorAction: 'Wait.' });
    expect(fromErrorEnvelope({})).toMatchObject({
      type: 'upstream_error',
      status: 502,
      message: 'generation failed',
      userMessage: 'generation failed',
      operatorAction: '',
    });
  });

  it('a flat envelope stored by an earlier release (a chat reply row) reads back the same: its details stay out', () => {
    const stored = JSON.parse(
      '{"type":"rate_limit_exceeded","message":"too many","user_message":"Slow down.","operator_action":"Wait.","status":429,"limit_scope":"key"}',
    ) as Record<string, unknown>;
    const back = fromErrorEnvelope(stored);
    expect({ ...back, message: back.message }).toEqual({
      name: 'DomainError',
      type: 'rate_limit_exceeded',
      status: 429,
      message: 'too many',
      userMessage: 'Slow down.',
      operatorAction: 'Wait.',
      details: {},
      headers: {},
    });
    expect(fromErrorEnvelope({ type: 'model_call_failed', message: 'boom' })).toMatchObject({ type: 'model_call_failed', status: 502, userMessage: 'boom' });
  });
});

describe("DomainError ↔ lossless envelope (a worker request's error, raised again by the api)", () => {
  const thrown = new ConflictError('drifted', { details: { paths: ['a'], n: 1 }, headers: { 'retry-after': '2' } }, 'patch_conflict');

  it('keeps every field, in the order worker_requests rows hold them, and survives JSON field for field', () => {
    const stored = JSON.stringify(toErrorEnvelope(thrown, 'lossless'));
    expect(stored).toBe(
      '{"type":"patch_conflict","status":409,"message":"drifted","user_message":"The resource changed state; the request does not apply now.",' +
        '"operator_action":"Reload the resource and retry.","details":{"paths":["a"],"n":1},"headers":{"retry-after":"2"}}',
    );
    const raised = fromErrorEnvelope(JSON.parse(stored) as Record<string, unknown>, 'lossless');
    expect(raised).toBeInstanceOf(DomainError);
    for (const field of ['type', 'status', 'message', 'userMessage', 'operatorAction', 'details', 'headers'] as const) {
      expect(raised[field]).toEqual(thrown[field]);
    }
  });

  it('a row stored before headers were kept raises with none', () => {
    const raised = fromErrorEnvelope(
      JSON.parse('{"type":"conflict","status":409,"message":"m","user_message":"u","operator_action":"o","details":{"x":1}}') as Record<string, unknown>,
      'lossless',
    );
    expect({
      type: raised.type,
      status: raised.status,
      user: raised.userMessage,
      op: raised.operatorAction,
      details: raised.details,
      headers: raised.headers,
    }).toEqual({
      type: 'conflict',
      status: 409,
      user: 'u',
      op: 'o',
      details: { x: 1 },
      headers: {},
    });
  });

  it('what a worker threw that was no DomainError is stored as the opaque internal 500', () => {
    const { domain, internal } = toDomainError(new Error('boom'));
    expect(internal).toBe(true);
    expect(toErrorEnvelope(domain, 'lossless')).toMatchObject({ type: 'gateway_error', status: 500, message: 'internal error', details: {}, headers: {} });
  });
});
