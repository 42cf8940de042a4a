import type { ApiEnvelope, ErrorEnvelope, EventEnvelope } from '@contracts';
import type { McpServerSpec } from '@modules/mcp';
import { followSse } from './sse-client';

/**
 * The slice of `/hecate/v1` the ACP agent uses (seed 003: tasks, runs, the run stream, the live stream, approvals),
 * typed by hand until libs/sdk (generated from the OpenAPI document) can take its place.
 */

export interface TaskResource {
  id: string;
  status: string;
  latest_run_id?: string;
}

export interface RunResource {
  id: string;
  task_id: string;
  status: string;
  error_kind?: string;
  last_error?: string;
  model?: string;
  provider?: string;
  workspace_path?: string;
}

export interface StepResource {
  id: string;
  kind: string;
  status: string;
  tool_name?: string;
  /** Agent-loop tool steps: `{"text": …, "is_error": …}`. */
  result?: string;
  input?: Record<string, unknown>;
  exit_code?: number;
  error?: string;
}

export interface ApprovalResource {
  id: string;
  run_id: string;
  kind: string;
  status: string;
  reason: string;
  details: Record<string, unknown>;
}

export interface ArtifactSummary {
  id: string;
  kind: string;
  step_id?: string;
  path?: string;
  status?: string;
}

/** One frame of `GET …/runs/{run_id}/stream`: the event and the run's state after it. */
export interface RunStreamFrame {
  sequence: number;
  terminal: boolean;
  /** Absent on the `done` frame of a run that was already terminal when the stream caught up. */
  event?: EventEnvelope;
  run: RunResource;
  steps: StepResource[];
  artifacts: ArtifactSummary[];
  approvals: ApprovalResource[];
}

/** One frame of `GET …/runs/{run_id}/live`: model text and reasoning deltas, running tools' output, the end. */
export type LiveFrame =
  | { kind: 'delta'; content?: string; reasoning?: string }
  | { kind: 'tool_progress'; tool_call_id: string; text: string; closed: boolean }
  | { kind: 'done'; status: string };

/** One `mcp_servers` entry of a task (seed 003; stdio or Streamable HTTP). */
export type McpServerEntry = McpServerSpec;

export interface NewAgentTask {
  title: string;
  prompt: string;
  working_directory: string;
  mcp_servers?: McpServerEntry[];
  requested_model?: string;
  requested_provider?: string;
  agent_id?: string;
}

/** An answer of the API that is not 2xx (or no answer): the envelope's stable `type`, never the credential. */
export class HecateApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly requestId?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const CALL_TIMEOUT_MS = 30_000;

export class HecateApi {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string | undefined,
  ) {}

  private headers(): Record<string, string> {
    return this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: { ...this.headers(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      throw this.unreachable(err);
    }
    if (!res.ok) throw await this.httpError(res);
    if (res.status === 204) return undefined as T;
    return ((await res.json()) as ApiEnvelope<T>).data;
  }

  private unreachable(err: unknown): HecateApiError {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err as Error).message;
    return new HecateApiError(0, 'service_unavailable', `cannot reach the Hecate server at ${this.baseUrl}: ${why}`);
  }

  /** The error envelope of a non-2xx answer (seed 003), or a `gateway_error` naming the status. */
  readonly httpError = async (res: Response): Promise<HecateApiError> => {
    const text = await res.text().catch(() => '');
    try {
      const e = (JSON.parse(text) as ErrorEnvelope).error;
      if (e?.type) return new HecateApiError(res.status, e.type, e.message || e.user_message || e.type, e.request_id, e.details as Record<string, unknown>);
    } catch {
      // not the envelope
    }
    return new HecateApiError(res.status, 'gateway_error', `Hecate answered ${res.status} ${res.statusText}: ${text.slice(0, 200)}`);
  };

  /** A cheap authenticated read: is the server there, and does it take the credential? */
  async check(): Promise<void> {
    await this.call('GET', '/hecate/v1/tasks?limit=1');
  }

  createTask(spec: NewAgentTask): Promise<TaskResource> {
    return this.call('POST', '/hecate/v1/tasks', { execution_kind: 'agent_loop', workspace_mode: 'in_place', ...spec });
  }

  /** 404 (not_found) for an agent the credential's tenant does not have. */
  async checkAgent(agentId: string): Promise<void> {
    await this.call('GET', `/hecate/v1/agents/${enc(agentId)}`);
  }

  startTask(taskId: string): Promise<RunResource> {
    return this.call('POST', `/hecate/v1/tasks/${enc(taskId)}/start`);
  }

  deleteTask(taskId: string): Promise<void> {
    return this.call('DELETE', `/hecate/v1/tasks/${enc(taskId)}`);
  }

  /** A new run of the task that starts from `runId`'s conversation plus `prompt` (seed 003 "Continue semantics"). */
  continueRun(taskId: string, runId: string, prompt: string): Promise<RunResource> {
    return this.call('POST', `/hecate/v1/tasks/${enc(taskId)}/runs/${enc(runId)}/continue`, { prompt });
  }

  getRun(taskId: string, runId: string): Promise<RunResource> {
    return this.call('GET', `/hecate/v1/tasks/${enc(taskId)}/runs/${enc(runId)}`);
  }

  cancelRun(taskId: string, runId: string, reason: string): Promise<RunResource> {
    return this.call('POST', `/hecate/v1/tasks/${enc(taskId)}/runs/${enc(runId)}/cancel`, { reason });
  }

  resolveApproval(taskId: string, approvalId: string, decision: 'approve' | 'reject', note: string): Promise<ApprovalResource> {
    return this.call('POST', `/hecate/v1/tasks/${enc(taskId)}/approvals/${enc(approvalId)}/resolve`, { decision, note });
  }

  /** The run's events with its state after each, from the first; ends after the terminal frame. */
  async *runStream(taskId: string, runId: string, signal: AbortSignal): AsyncGenerator<RunStreamFrame> {
    const url = `${this.baseUrl}/hecate/v1/tasks/${enc(taskId)}/runs/${enc(runId)}/stream`;
    for await (const m of followSse({ url, headers: this.headers(), signal, httpError: this.httpError })) {
      if (m.event !== 'snapshot' && m.event !== 'done') continue;
      const frame = (JSON.parse(m.data) as ApiEnvelope<RunStreamFrame>).data;
      yield frame;
      if (m.event === 'done') return;
    }
  }

  /** The run's live stream (model deltas, tool output) from its start; ends with the run. */
  async *liveStream(taskId: string, runId: string, signal: AbortSignal): AsyncGenerator<LiveFrame> {
    const url = `${this.baseUrl}/hecate/v1/tasks/${enc(taskId)}/runs/${enc(runId)}/live`;
    for await (const m of followSse({ url, headers: this.headers(), signal, httpError: this.httpError })) {
      const data = JSON.parse(m.data) as Record<string, unknown>;
      if (m.event === 'done') {
        yield { kind: 'done', status: String(data.status ?? '') };
        return;
      }
      if (m.event === 'tool_progress') {
        yield { kind: 'tool_progress', tool_call_id: String(data.tool_call_id ?? ''), text: String(data.text ?? ''), closed: data.closed === true };
      } else if (data.type === undefined && (typeof data.content === 'string' || typeof data.reasoning === 'string')) {
        // Model deltas only: `message` (guidance taken by the loop) and receipt frames carry a `type`.
        yield { kind: 'delta', content: data.content as string | undefined, reasoning: data.reasoning as string | undefined };
      }
    }
  }
}

const enc = encodeURIComponent;
