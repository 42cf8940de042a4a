import { DomainError, ServiceUnavailableError } from '@core/http/domain-error';
import { toDomainError } from '@core/http/error-rendering';

type Json = Record<string, unknown>;

/** The error a request ended with, as stored on its row and raised again by the api (every field the error renders from). */
export interface StoredWorkerError {
  type: string;
  status: number;
  message: string;
  user_message: string;
  operator_action: string;
  details: Json;
  headers?: Record<string, string>;
}

/** What a worker stores for the error its handler threw; `internal` when it was no DomainError (a bug: logged there). */
export function storeWorkerError(err: unknown): { stored: StoredWorkerError; internal: boolean } {
  const { domain, internal } = toDomainError(err);
  return {
    internal,
    stored: {
      type: domain.type,
      status: domain.status,
      message: domain.message,
      user_message: domain.userMessage,
      operator_action: domain.operatorAction,
      details: domain.details,
      headers: domain.headers,
    },
  };
}

/** The stored error as the DomainError the worker threw: same type, status, messages, details and headers. */
export function raiseWorkerError(e: StoredWorkerError): DomainError {
  return new DomainError(e.type, e.status, e.message, {
    userMessage: e.user_message,
    operatorAction: e.operator_action,
    details: e.details ?? {},
    headers: e.headers ?? {},
  });
}

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
