import { ErrorType } from '@contracts/errors';
import { DomainError, InvalidRequestError } from '@core/http/domain-error';

export class BadGatewayRequestError extends InvalidRequestError {
  constructor(message: string, param?: string) {
    super(message, { userMessage: 'The request is invalid.', operatorAction: 'Fix the request body and retry.', details: param ? { param } : {} });
  }
}

export class RateLimitExceededError extends DomainError {
  constructor(retryAfterS: number) {
    super(ErrorType.RateLimitExceeded, 429, 'rate limit exceeded', {
      userMessage: 'Too many requests.',
      operatorAction: 'Slow down and retry after X-RateLimit-Reset (GATEWAY_RATE_LIMIT_RPM / GATEWAY_RATE_LIMIT_BURST set the limit).',
      headers: { 'retry-after': String(retryAfterS) },
    });
  }
}
