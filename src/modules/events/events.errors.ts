import { InvalidRequestError } from '@core/http/domain-error';

export class InvalidCursorError extends InvalidRequestError {
  constructor(name: string, value: string) {
    super(`${name} must be a non-negative integer cursor, got "${value.slice(0, 64)}"`, {
      userMessage: 'The event cursor is invalid.',
      operatorAction: 'Pass the sequence (or cursor) of the last event you received.',
    });
  }
}
