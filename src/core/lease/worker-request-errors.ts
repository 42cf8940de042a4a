import { DomainError, ServiceUnavailableError } from '@core/http/domain-error';

type Json = Record<string, unknown>;

/** The one operator action of a request no worker answered. */
export const NO_WORKER_OPERATOR_ACTION = 'Check that workers are running (GET /hecate/v1/system/stats, live_workers), then retry.';

/**
 * The one "no worker answered" error (503 service_unavailable) of every request the api asks a worker to run: each
 * route says what did not happen (`message`, `userMessage`, `details`); the operator action is the same everywhere.
 */
export function noWorkerAnswered(message: string, opts: { userMessage: string; details?: Json }): DomainError {
  return new ServiceUnavailableError(message, {
    userMessage: opts.userMessage,
    operatorAction: NO_WORKER_OPERATOR_ACTION,
    ...(opts.details ? { details: opts.details } : {}),
  });
}
