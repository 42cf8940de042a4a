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
 * The envelope that keeps every field a DomainError renders from, so that it is raised again unchanged (a worker
 * request's error on its `worker_requests` row, which the api raises): details nested, headers kept. Rows stored
 * before headers were kept have none.
 */
export type LosslessErrorEnvelope = {
  type: string;
  status: number;
  message: string;
  user_message: string;
  operator_action: string;
  details: Record<string, unknown>;
  headers?: Record<string, string>;
};

/**
 * Which fields a record keeps: `full` (`type, message, user_message, operator_action, status, ...details`),
 * `without-details` (the same without the details), `brief` (`type, message`), `lossless` (LosslessErrorEnvelope).
 */
export type EnvelopeFields = 'full' | 'without-details' | 'brief' | 'lossless';

/** `err` when it is a DomainError; anything else as the DomainError `fallback` makes of its message. */
export function asDomainError(err: unknown, fallback: (message: string) => DomainError): DomainError {
  return err instanceof DomainError ? err : fallback(err instanceof Error ? err.message : String(err));
}

/** A DomainError as the envelope stored and sent for it (the field order is the stored and sent order). */
export function toErrorEnvelope(err: DomainError, fields: 'lossless'): LosslessErrorEnvelope;
export function toErrorEnvelope(err: DomainError, fields?: Exclude<EnvelopeFields, 'lossless'>): ErrorEnvelope;
export function toErrorEnvelope(err: DomainError, fields: EnvelopeFields = 'full'): ErrorEnvelope | LosslessErrorEnvelope {
  if (fields === 'brief') return { type: err.type, message: err.message };
  if (fields === 'lossless') {
    // worker_requests.error is json (not jsonb): this order is what its rows hold.
    const { type, status, message, userMessage, operatorAction, details, headers } = err;
    return { type, status, message, user_message: userMessage, operator_action: operatorAction, details, headers };
  }
  const envelope = { type: err.type, message: err.message, user_message: err.userMessage, operator_action: err.operatorAction, status: err.status };
  return fields === 'full' ? { ...envelope, ...err.details } : envelope;
}

/** What a stored envelope lacks, when it is rethrown: the failure of a generation upstream. */
const UPSTREAM = { type: 'upstream_error', status: 502, message: 'generation failed' };

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const record = <T>(v: unknown): T | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as T) : undefined);

/**
 * A stored envelope rethrown as the DomainError it was made from: `type`, `status`, `message`, `user_message` and
 * `operator_action` (what is missing from it is an upstream failure's, 502); a `lossless` one gives back its details
 * and headers too. `fields` says how it was stored: a flat envelope's details are not read back.
 */
export function fromErrorEnvelope(e: Record<string, unknown>, fields: EnvelopeFields = 'full'): DomainError {
  const lossless = fields === 'lossless';
  return new DomainError(String(e.type ?? UPSTREAM.type), Number(e.status ?? UPSTREAM.status), String(e.message ?? UPSTREAM.message), {
    userMessage: text(e.user_message),
    operatorAction: text(e.operator_action),
    ...(lossless ? { details: record(e.details), headers: record(e.headers) } : {}),
  });
}
