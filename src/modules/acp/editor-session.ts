import type { Logger } from 'pino';
import type { AcpConfig } from './acp-config';
import type { Acp } from './acp-sdk';
import { callOptions, type HecateClient, isApiStatus, type McpServerEntry, type RunOutcome, type TaskRun } from './hecate-client';
import { type EditorChannel, RunFollower, type RunEnd } from './run-follower';

/** A run that failed: the prompt answers with an ACP error carrying the run's Hecate error type. */
export class RunFailedError extends Error {
  constructor(readonly run: RunOutcome) {
    super(`the Hecate run ${run.id} failed: ${run.last_error || run.error_kind || 'failed'}`);
  }
}

/** A prompt while the previous one still runs (clients send one at a time per session). */
export class SessionBusyError extends Error {}

interface Turn {
  /** Aborted by `session/cancel` (or the prompt request's own cancellation). */
  readonly cancel: AbortController;
  run: TaskRun | null;
}

const TITLE_MAX = 80;

/**
 * One editor conversation = one durable `agent_loop` task working in place in the editor's directory (a run's
 * `continue`, docs/api.md): the first prompt creates and starts the task, each later prompt `continue`s its latest run,
 * so the model sees the whole conversation. The task is created on the first prompt because an agent_loop task
 * needs its prompt.
 */
export class EditorSession {
  private taskId: string | null = null;
  private lastRunId: string | null = null;
  private turn: Turn | null = null;

  constructor(
    readonly id: string,
    readonly cwd: string,
    private readonly mcpServers: McpServerEntry[],
    private readonly api: HecateClient,
    private readonly config: Pick<AcpConfig, 'model' | 'provider' | 'agentId'>,
    private readonly log: Logger,
  ) {}

  get task(): string | null {
    return this.taskId;
  }

  /** A resumed session: its task and the run the next prompt continues (null: it starts the task's next run anew). */
  adopt(taskId: string, lastRunId: string | null): void {
    this.taskId = taskId;
    this.lastRunId = lastRunId;
  }

  async prompt(text: string, editor: EditorChannel, requestSignal: AbortSignal): Promise<Acp.StopReason> {
    if (this.turn) throw new SessionBusyError(`session ${this.id} is already answering a prompt`);
    const turn: Turn = { cancel: new AbortController(), run: null };
    this.turn = turn;
    const onRequestCancel = () => this.cancel();
    requestSignal.addEventListener('abort', onRequestCancel, { once: true });
    try {
      const run = await this.startRun(text);
      turn.run = run;
      this.lastRunId = run.id;
      this.log.info({ session_id: this.id, task_id: run.task_id, run_id: run.id }, 'prompt started a run');
      // A cancel that came while the run was being created.
      if (turn.cancel.signal.aborted) await this.cancelRun(run);
      const end = await new RunFollower(
        this.api,
        editor,
        { taskId: run.task_id, runId: run.id },
        this.cwd,
        turn.cancel.signal,
        () => this.cancel(),
        this.log,
      ).follow();
      return stopReason(end, turn.cancel.signal.aborted);
    } finally {
      requestSignal.removeEventListener('abort', onRequestCancel);
      this.turn = null;
    }
  }

  /** `session/cancel`: the run in flight is cancelled through the API (its pending approval with it). */
  cancel(): void {
    const turn = this.turn;
    if (!turn || turn.cancel.signal.aborted) return;
    turn.cancel.abort();
    if (turn.run) void this.cancelRun(turn.run);
  }

  private async cancelRun(run: TaskRun): Promise<void> {
    try {
      await this.api.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/cancel', {
        path: { task_id: run.task_id, run_id: run.id },
        body: { reason: 'cancelled in the editor (ACP)' },
        ...callOptions(),
      });
    } catch (err) {
      // 409: it already ended.
      if (!isApiStatus(err, 409)) this.log.warn({ err: String(err), run_id: run.id }, 'cancelling the run failed');
    }
  }

  private async startRun(prompt: string): Promise<TaskRun> {
    if (this.taskId && this.lastRunId) {
      try {
        const { data } = await this.api.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/continue', {
          path: { task_id: this.taskId, run_id: this.lastRunId },
          body: { prompt },
          ...callOptions(),
        });
        return data;
      } catch (err) {
        // 400: the last run left no conversation to continue from (it failed before its first model call).
        if (!isApiStatus(err, 400) || !(err instanceof Error)) throw err;
        this.log.info({ session_id: this.id, task_id: this.taskId, reason: err.message }, 'the last run cannot be continued; starting a new task');
      }
    }
    const { data: task } = await this.api.post('/hecate/v1/tasks', {
      body: {
        execution_kind: 'agent_loop',
        workspace_mode: 'in_place',
        title: titleOf(prompt),
        prompt,
        // The session's id: a resumed session (another process, another machine) finds its task by it.
        client_ref: this.id,
        working_directory: this.cwd,
        ...(this.mcpServers.length > 0 ? { mcp_servers: this.mcpServers } : {}),
        ...(this.config.model ? { requested_model: this.config.model } : {}),
        ...(this.config.provider ? { requested_provider: this.config.provider } : {}),
        ...(this.config.agentId ? { agent_id: this.config.agentId } : {}),
      },
      ...callOptions(),
    });
    try {
      const { data: run } = await this.api.post('/hecate/v1/tasks/{task_id}/start', { path: { task_id: task.id }, ...callOptions() });
      this.taskId = task.id;
      return run;
    } catch (err) {
      // Not startable (e.g. 422 model_not_configured): no task is left behind.
      await this.api
        .delete('/hecate/v1/tasks/{task_id}', { path: { task_id: task.id }, ...callOptions() })
        .catch((e: unknown) =>
          this.log.warn({ session_id: this.id, task_id: task.id, err: String(e) }, 'deleting the unstarted task failed; it stays, never run'),
        );
      throw err;
    }
  }
}

/**
 * The ACP stop reason of a followed run: completed → `end_turn` (`refusal` / `max_tokens` when the last model call
 * stopped so); cancelled → `cancelled`, except a run the editor's rejection ended (`end_turn`: the editor decided,
 * nothing was cancelled); the turn cap → `max_turn_requests`; any other failure → RunFailedError.
 */
export function stopReason(end: RunEnd, cancelledByEditor: boolean): Acp.StopReason {
  const { run, modelStopReason } = end;
  switch (run.status) {
    case 'completed':
      return modelStopReason === 'refusal' ? 'refusal' : modelStopReason === 'max_tokens' ? 'max_tokens' : 'end_turn';
    case 'cancelled':
      return end.rejected && !cancelledByEditor ? 'end_turn' : 'cancelled';
    case 'failed':
      if (run.error_kind === 'turn_limit_exceeded') return 'max_turn_requests';
      if (modelStopReason === 'refusal') return 'refusal';
      throw new RunFailedError(run);
    default:
      throw new RunFailedError({ ...run, error_kind: run.error_kind || 'run_not_terminal' });
  }
}

function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0];
  return `Editor: ${line.length > TITLE_MAX ? `${line.slice(0, TITLE_MAX - 1)}…` : line}`;
}
