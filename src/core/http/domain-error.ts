import { ErrorType } from '@contracts/errors';

export interface DomainErrorOptions {
  userMessage?: string;
  operatorAction?: string;
  /** Extra fields rendered inside `error` (e.g. `canonical_visible_session_id`). */
  details?: Record<string, unknown>;
  /** Response headers to add (e.g. Retry-After). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * Base of every error a service throws (docs/style.md rule 10). Carries the stable `type` and the HTTP status;
 * the global filter renders it. Services never throw HttpException.
 */
export class DomainError extends Error {
  readonly userMessage: string;
  readonly operatorAction: string;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.userMessage = options.userMessage ?? message;
    this.operatorAction = options.operatorAction ?? '';
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }
}

export class InvalidRequestError extends DomainError {
  constructor(message: string, options?: DomainErrorOptions) {
    super(ErrorType.InvalidRequest, 400, message, { userMessage: 'The request is invalid.', operatorAction: 'Fix the request and retry.', ...options });
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string, options?: DomainErrorOptions) {
    super(ErrorType.NotFound, 404, message, { userMessage: 'The requested resource does not exist.', operatorAction: 'Check the id or path.', ...options });
  }
}

export class ConflictError extends DomainError {
  constructor(message: string, options?: DomainErrorOptions, type: string = ErrorType.Conflict) {
    super(type, 409, message, {
      userMessage: 'The resource changed state; the request does not apply now.',
      operatorAction: 'Reload the resource and retry.',
      ...options,
    });
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'missing or invalid credentials') {
    super(ErrorType.Unauthorized, 401, message, {
      userMessage: 'Authentication is required.',
      operatorAction: 'Send a valid API key or the operator token as a Bearer token or in x-api-key.',
    });
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super(ErrorType.Forbidden, 403, message, {
      userMessage: 'This credential is not allowed to do that.',
      operatorAction: 'Use a key with the required scope (inference for /v1, operator for /hecate/v1, admin for shared settings).',
    });
  }
}

export class ServiceUnavailableError extends DomainError {
  constructor(message: string, options?: DomainErrorOptions) {
    super(ErrorType.ServiceUnavailable, 503, message, {
      userMessage: 'A backing service is unavailable; nothing was changed.',
      operatorAction: 'Check Redis and Postgres health (GET /readyz) and retry.',
      headers: { 'retry-after': '1' },
      ...options,
    });
  }
}
