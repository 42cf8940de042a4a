import { DomainError } from './domain-error';
import { asDomainError, fromErrorEnvelope, toErrorEnvelope } from './error-envelope';

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
});
