import { HecateClient, HecateError, type Schemas } from '@sdk';

/** The resources of `/hecate/v1` the ACP agent reads (generated from the server's OpenAPI document). */
export type TaskRun = Schemas['TaskRun'];
export type TaskStep = Schemas['TaskStep'];
export type TaskApproval = Schemas['TaskApproval'];
export type RunStreamEvent = Schemas['TaskRunStreamEvent'];

/** What a prompt's answer tells of its run (the fields of a TaskRun it reads). */
export interface RunOutcome {
  id: string;
  task_id: string;
  status: string;
  error_kind?: string;
  last_error?: string;
}

/**
 * One `mcp_servers` entry of a task: stdio (`command`, `args`, `env`) or Streamable HTTP (`url`, `headers`). The
 * document types the list loosely, so the shape the agent sends is written here.
 */
export type McpServerEntry =
  { name: string; command: string; args?: string[]; env?: Record<string, string> } | { name: string; url: string; headers?: Record<string, string> };

/** How long one API call may take (streams are not limited: they last as long as the run). */
const CALL_TIMEOUT_MS = 30_000;

/** The per-call options of every request the agent makes: a time limit, no retry (a prompt fails fast). */
export const callOptions = (): { signal: AbortSignal; retry: false } => ({ signal: AbortSignal.timeout(CALL_TIMEOUT_MS), retry: false });

/** The SDK client of the server the editor's agent drives, with the credential from HECATE_API_KEY. */
export function hecateClient(baseUrl: string, apiKey: string | undefined): HecateClient {
  return new HecateClient({ baseUrl, apiKey, retry: { retries: 0 } });
}

/** A failed call as the editor is told it: the envelope's stable `type`, never the credential. */
export interface ApiFailure {
  /** HTTP status; 0 when no answer arrived. */
  status: number;
  type: string;
  message: string;
  requestId?: string;
}

/**
 * A HecateError as an ApiFailure: an unreachable server is `service_unavailable` (naming the server and why), an
 * answer without an error envelope (a proxy's) is `gateway_error`, an envelope keeps its `type`.
 */
export function apiFailure(err: HecateError, baseUrl: string): ApiFailure {
  if (err.type === 'network_error') {
    const cause = err.cause instanceof Error ? err.cause : undefined;
    const inner = (cause as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const why = inner?.code ?? inner?.message ?? cause?.message ?? err.message;
    return { status: 0, type: 'service_unavailable', message: `cannot reach the Hecate server at ${baseUrl}: ${why}` };
  }
  if (err.type === 'invalid_response') return { status: err.status, type: 'gateway_error', message: err.message, requestId: err.request_id };
  return { status: err.status, type: err.type, message: err.message, requestId: err.request_id };
}

/** Whether `err` is the API's answer with this status (e.g. 409: the run already ended). */
export const isApiStatus = (err: unknown, status: number): boolean => err instanceof HecateError && err.status === status;

export { HecateClient, HecateError };
