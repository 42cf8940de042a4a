import type { components } from './generated/schema';

/** Every `error.type` the server documents, and the two the client adds for failures without an answer. */
export type HecateErrorType = components['schemas']['ErrorType'] | 'network_error' | 'invalid_response';

type ErrorBody = components['schemas']['ErrorBody'];

/**
 * The one error the SDK throws (fields named as in the envelope): an error envelope of `/hecate/v1` (docs/api.md §4), or a failure to get an answer at all
 * (`network_error`, status 0) or to read one (`invalid_response`). Branch on `type`, never on `message`.
 */
export class HecateError extends Error {
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly type: HecateErrorType;
  /** The short operator-facing summary. */
  readonly user_message: string;
  /** The recommended next step. */
  readonly operator_action: string;
  /** X-Request-Id of the failed request: look it up with `GET /hecate/v1/traces?request_id=`. */
  readonly request_id: string | undefined;
  readonly trace_id: string | undefined;
  /** The whole `error` object, runtime-specific repair fields included (task_id, latest_run_id, limit_ms, …). */
  readonly body: ErrorBody | undefined;

  constructor(init: { status: number; type: HecateErrorType; message: string; body?: ErrorBody; requestId?: string; traceId?: string; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'HecateError';
    this.status = init.status;
    this.type = init.type;
    this.body = init.body;
    this.user_message = init.body?.user_message ?? init.message;
    this.operator_action = init.body?.operator_action ?? '';
    this.request_id = init.body?.request_id ?? init.requestId;
    this.trace_id = init.body?.trace_id ?? init.traceId;
  }

  /** Builds the error from a non-2xx answer (its body read as the error envelope when it is one). */
  static async fromResponse(res: Response): Promise<HecateError> {
    // A body that cannot be read leaves the status and headers to describe the error.
    const text = await res.text().catch(() => '');
    const requestId = res.headers.get('x-request-id') ?? undefined;
    const traceId = res.headers.get('x-trace-id') ?? undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const error = (parsed as { error?: unknown } | undefined)?.error;
    if (error && typeof error === 'object' && typeof (error as ErrorBody).type === 'string') {
      const body = error as ErrorBody;
      return new HecateError({ status: res.status, type: body.type, message: body.message ?? text, body, requestId, traceId });
    }
    return new HecateError({
      status: res.status,
      type: 'invalid_response',
      message: `HTTP ${res.status} without an error envelope: ${text.slice(0, 200)}`,
      requestId,
      traceId,
    });
  }

  static network(cause: unknown, what: string): HecateError {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new HecateError({ status: 0, type: 'network_error', message: `${what}: ${reason}`, cause });
  }
}
