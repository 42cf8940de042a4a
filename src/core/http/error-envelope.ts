import { DomainError } from './domain-error';

/**
 * The `error` object kept on what an error failed (a chat reply, an agent-chat turn, a queued prompt) and sent in SSE
 * `error` frames: the DomainError's stable `type` and `message`, and, in full, `user_message`, `operator_action`,
 * `status` and its details.
 */
export interface ErrorEnvelope {
  type: string;
  message: string;
  user_message?: string;
  operator_action?: string;
  status?: number;
  [detail: string]: unknown;
}

/**
 * Which fields a record keeps: `full` (`type, message, user_message, operator_action, status, ...details`),
 * `without-details` (the same without the details), `brief` (`type, message`).
 */
export type EnvelopeFields = 'full' | 'without-details' | 'brief';

/** `err` when it is a DomainError; anything else as the DomainError `fallback` makes of its message. */
export function asDomainError(err: unknown, fallback: (message: string) => DomainError): DomainError {
  return err instanceof DomainError ? err : fallback(err instanceof Error ? err.message : String(err));
}

/** A DomainError as the envelope stored and sent for it (the field order is the stored and sent order). */
export function toErrorEnvelope(err: DomainError, fields: EnvelopeFields = 'full'): ErrorEnvelope {
  if (fields === 'brief') return { type: err.type, message: err.message };
  const envelope = { type: err.type, message: err.message, user_message: err.userMessage, operator_action: err.operatorAction, status: err.status };
  return fields === 'full' ? { ...envelope, ...err.details } : envelope;
}

/** What a stored envelope lacks, when it is rethrown: the failure of a generation upstream. */
const UPSTREAM = { type: 'upstream_error', status: 502, message: 'generation failed' };

/**
 * A stored envelope rethrown as the DomainError it was made from: `type`, `status`, `message`, `user_message` and
 * `operator_action` (what is missing from it is an upstream failure's, 502).
 */
export function fromErrorEnvelope(e: Record<string, unknown>): DomainError {
  return new DomainError(String(e.type ?? UPSTREAM.type), Number(e.status ?? UPSTREAM.status), String(e.message ?? UPSTREAM.message), {
    userMessage: typeof e.user_message === 'string' ? e.user_message : undefined,
    operatorAction: typeof e.operator_action === 'string' ? e.operator_action : undefined,
  });
}
