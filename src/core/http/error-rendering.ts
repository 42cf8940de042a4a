import { HttpException } from '@nestjs/common';
import { ErrorType } from '@contracts/errors';
import { isDatabaseConnectionError, isUnstorableValueError } from '@core/database/database.errors';
import { QueueUnavailableError } from '@core/queue/run-queue.port';
import { DomainError, InvalidRequestError, ServiceUnavailableError } from './domain-error';

export type ErrorDialect = 'hecate' | 'openai' | 'anthropic';

export const dialectOf = (url: string): ErrorDialect => {
  if (url.startsWith('/v1/messages')) return 'anthropic';
  if (url.startsWith('/v1/')) return 'openai';
  return 'hecate';
};

interface FastifyishError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/** Maps anything thrown to a DomainError; unknown errors become an opaque 500 (`internal` set). */
export function toDomainError(error: unknown): { domain: DomainError; internal: boolean } {
  if (error instanceof DomainError) return { domain: error, internal: false };
  if (error instanceof QueueUnavailableError) return { domain: new ServiceUnavailableError(error.message), internal: false };
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const response = error.getResponse();
    const message =
      typeof response === 'object' && response !== null && 'message' in response ? String((response as { message: unknown }).message) : error.message;
    return { domain: fromStatus(status, message), internal: false };
  }
  // Fallbacks for what reached the database unchecked: a value it cannot store is the request's fault (400); a
  // lost connection is an outage to retry (503 + Retry-After), never a 500.
  if (isUnstorableValueError(error)) {
    return {
      domain: new InvalidRequestError('the request holds a value the database cannot store (a NUL character or an invalid byte sequence)'),
      internal: false,
    };
  }
  if (isDatabaseConnectionError(error)) {
    return { domain: new ServiceUnavailableError('the database connection was lost; retry the request'), internal: false };
  }
  const fe = error as FastifyishError;
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { domain: fromStatus(fe.statusCode, fe.message ?? 'bad request', fe.code), internal: false };
  }
  return {
    domain: new DomainError(ErrorType.GatewayError, 500, 'internal error', {
      userMessage: 'Hecate failed before it could classify the failure.',
      operatorAction: 'Look up the request id in the server logs.',
    }),
    internal: true,
  };
}

function fromStatus(status: number, message: string, code?: string): DomainError {
  switch (status) {
    case 415:
      return new DomainError(ErrorType.UnsupportedMediaType, 415, message, {
        userMessage: 'The request body must be JSON.',
        operatorAction: 'Send the body as JSON with Content-Type: application/json.',
      });
    case 400:
      return new DomainError(
        ErrorType.InvalidRequest,
        400,
        code === 'FST_ERR_CTP_INVALID_JSON_BODY' || /JSON/.test(message) ? `malformed JSON body: ${message}` : message,
        {
          userMessage: 'The request is invalid.',
          operatorAction: 'Fix the request body or parameters and retry.',
        },
      );
    case 401:
      return new DomainError(ErrorType.Unauthorized, 401, message, { userMessage: 'Authentication is required.', operatorAction: 'Send a valid credential.' });
    case 403:
      return new DomainError(ErrorType.Forbidden, 403, message, { userMessage: 'Not allowed.', operatorAction: 'Use a credential with the required scope.' });
    case 404:
      return new DomainError(ErrorType.NotFound, 404, message, {
        userMessage: 'The requested resource does not exist.',
        operatorAction: 'Check the path and id.',
      });
    case 409:
      return new DomainError(ErrorType.Conflict, 409, message, { userMessage: 'The resource changed state.', operatorAction: 'Reload and retry.' });
    case 413:
      return new DomainError(ErrorType.PayloadTooLarge, 413, 'request body exceeds the size limit', {
        userMessage: 'The request body is too large.',
        operatorAction: 'Send a smaller body (GATEWAY_BODY_LIMIT_BYTES sets the limit).',
      });
    case 429:
      return new DomainError(ErrorType.RateLimitExceeded, 429, message, {
        userMessage: 'Too many requests.',
        operatorAction: 'Slow down and retry after the reset.',
      });
    default:
      return new DomainError(status >= 500 ? ErrorType.GatewayError : ErrorType.InvalidRequest, status, message, {
        userMessage: 'The request failed.',
        operatorAction: 'Check the request and retry.',
      });
  }
}

/** Renders the error body in the dialect of the path (docs/design.md §6). */
/**
 * Where Anthropic's protocol names the failure by its status, /v1/messages answers with that name (its clients and
 * Claude Code branch on it); `code` keeps Hecate's stable type.
 */
const ANTHROPIC_TYPES: Record<number, string> = { 401: 'authentication_error', 403: 'permission_error' };

export function renderError(dialect: ErrorDialect, err: DomainError, requestId: string, traceId: string | undefined): object {
  const common = {
    message: err.message,
    user_message: err.userMessage,
    operator_action: err.operatorAction,
    request_id: requestId,
    ...(traceId ? { trace_id: traceId } : {}),
    ...err.details,
  };
  if (dialect === 'openai')
    return { error: { ...common, type: err.type, code: err.type, param: typeof err.details.param === 'string' ? err.details.param : null } };
  // docs/api.md §4: the over-limit answer carries `code` on /v1/messages as on /v1/chat/completions.
  if (dialect === 'anthropic')
    return { type: 'error', error: { type: ANTHROPIC_TYPES[err.status] ?? err.type, code: err.type, ...common }, request_id: requestId };
  return { error: { type: err.type, ...common } };
}
