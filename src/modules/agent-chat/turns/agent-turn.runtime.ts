import { Injectable } from '@nestjs/common';
import type { RequestOrigin } from '@core/context/request-context';
import { NOW } from '@core/database/sql';
import { DomainError } from '@core/http/domain-error';
import { AgentLoopRunsService } from '@modules/agent-loop';
import { type RunResponse, TaskRunChainsService } from '@modules/tasks';
import { isActiveTurn, type TurnRow } from '../agent-chat-rows';
import { AgentChatTurnsService } from './agent-chat-turns.service';
import { AgentChatRepository } from '../agent-chat.repository';
import { type LaunchRequest, type TurnRuntime, TurnRuntimeKind } from './turn-runtime';

/** An agent turn whose api died between persisting it and starting its run is failed after this long. */
const START_GRACE_MS = 60_000;
/** How long a cancelled turn waits for its run's worker to store the workspace diff. */
const DIFF_AFTER_CANCEL_WAIT_MS = 15_000;

/**
 * `runtime_kind: agent` (docs/api.md §4 Hecate Agent): a turn is a run of a visible `agent_loop` task in the session's
 * workspace — the first tools-on prompt of a segment creates the task, follow-ups `continue` its latest run. The turn
 * follows its run (docs/design.md §11.4: the terminal state is read from Postgres), settled by whoever reads first.
 */
@Injectable()
@TurnRuntimeKind()
export class AgentTurnRuntime implements TurnRuntime {
  readonly kind = 'agent' as const;

  constructor(
    private readonly repo: AgentChatRepository,
    private readonly turns: AgentChatTurnsService,
    private readonly chains: TaskRunChainsService,
    private readonly agentRuns: AgentLoopRunsService,
  ) {}

  /** The previous turn's segment goes on when it was an agent turn with a run (tools stayed on). */
  continues(previous: TurnRow | null): TurnRow | null {
    return previous?.runtime_kind === 'agent' && previous.task_id && previous.run_id ? previous : null;
  }

  /** `continue` of the segment's latest run, else a new task (a new segment). A refusal (400, 422) takes the turn back out. */
  async launch(req: LaunchRequest): Promise<TurnRow> {
    const { principal: p, origin, session, turn, continuing } = req;
    let run: RunResponse;
    try {
      run = continuing
        ? await this.agentRuns.continue(p.tenantId, continuing.task_id!, continuing.run_id!, req.content, origin)
        : await this.chains.createAndStart(
            p.tenantId,
            {
              title: session.title,
              prompt: req.content,
              system_prompt: turn.system_prompt || session.system_prompt || undefined,
              execution_kind: 'agent_loop',
              working_directory: req.workspace,
              workspace_mode: 'in_place',
              requested_provider: turn.provider || undefined,
              requested_model: turn.model,
              // The session's saved agent brings its tools, MCP servers, approval policies, budget and turn cap.
              agent_id: session.agent_id || undefined,
              agent_version: session.agent_version ?? undefined,
            },
            { hostPaths: p.kind !== 'api_key', agentChat: true, apiKeyId: session.api_key_id ?? p.apiKeyId },
            origin,
          );
    } catch (err) {
      await this.repo.transaction(async (m) => {
        const own = req.reusedUserMessage ? [turn.assistant_message_id] : [turn.user_message_id, turn.assistant_message_id];
        await this.repo.deleteMessages(m, own);
        await this.repo.updateTurn(m, turn.id, {
          status: 'failed',
          error_kind: 'start_refused',
          error: err instanceof Error ? err.message : String(err),
          finished_at: NOW,
        });
        const s = (await this.repo.lockSession(m, p.tenantId, session.id))!;
        await this.repo.updateSession(m, session.id, {
          status: session.status,
          turns_used: Math.max(0, s.turns_used - 1),
          message_count: Math.max(0, s.message_count - own.length),
        });
      });
      throw err;
    }
    await this.repo.transaction(async (m) => {
      await this.repo.updateTurn(m, turn.id, { task_id: run.task_id, run_id: run.id, stream_id: run.id });
      for (const id of [turn.user_message_id, turn.assistant_message_id]) await this.repo.updateMessage(m, id, { task_id: run.task_id, run_id: run.id });
    });
    return this.follow((await this.repo.findTurn(turn.id))!);
  }

  /** Running, waiting for an approval, or ended with the run's final answer (or error), diff, timing and activity. */
  async follow(turn: TurnRow): Promise<TurnRow> {
    if (!isActiveTurn(turn.status) || !turn.run_id || !turn.task_id) return turn;
    let run;
    try {
      run = await this.chains.getRun(turn.tenant_id, turn.task_id, turn.run_id);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status !== 404) throw err;
      // The task was deleted under the chat: the turn cannot go on.
      await this.turns.end(turn, { status: 'failed', content: '', error: { type: 'task_deleted', message: `task ${turn.task_id} no longer exists` } });
      return (await this.repo.findTurn(turn.id)) ?? turn;
    }
    if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') {
      const [answer, diff, story] = await Promise.all([
        this.chains.runArtifact(turn.tenant_id, run.id, 'summary'),
        this.chains.runArtifactWithMetadata(turn.tenant_id, run.id, 'diff'),
        this.chains.activityAndTiming(turn.tenant_id, turn.task_id, run.id),
      ]);
      if (!diff && run.status === 'cancelled' && turn.status !== 'awaiting_approval' && (await this.diffComing(turn, run))) return turn;
      await this.turns.end(turn, {
        status: run.status,
        content: answer ?? '',
        error: run.status === 'completed' ? undefined : { type: run.error_kind || run.status, message: run.last_error || run.status },
        provider: run.provider,
        model: run.model,
        diff: diff ? { content: diff.content, base_tree: String(diff.metadata.base_tree ?? '') } : undefined,
        timing: { ...story.timing },
        activity: story.activity as unknown as Array<Record<string, unknown>>,
        // The run's own start: a run that ended before anyone saw it running still has its duration.
        startedAt: run.started_at ? new Date(run.started_at) : undefined,
      });
    } else if (run.status === 'awaiting_approval' && turn.status !== 'awaiting_approval') {
      // The transcript shows the run's activity so far: its pending approval with `approval_id` and `needs_action`.
      const story = await this.chains.activityAndTiming(turn.tenant_id, turn.task_id, run.id);
      await this.turns.moveTo(turn, 'awaiting_approval', story.activity as unknown as Array<Record<string, unknown>>);
    } else if ((run.status === 'running' || run.status === 'queued') && turn.status === 'awaiting_approval') {
      await this.turns.moveTo(turn, 'running', []);
    } else if (run.status === 'running' && turn.status === 'queued') {
      await this.turns.moveTo(turn, 'running');
    } else {
      return turn;
    }
    return (await this.repo.findTurn(turn.id)) ?? turn;
  }

  /**
   * A cancelled run's worker still takes its workspace diff (the changes made before the cancel are the turn's files):
   * the turn ends once it is stored, or DIFF_AFTER_CANCEL_WAIT_MS after the cancel when no worker stores it (a dead
   * one). Only for a git workspace (a non-empty base tree) whose run was executing (not waiting for an approval).
   */
  private async diffComing(turn: TurnRow, run: RunResponse): Promise<boolean> {
    if (!run.finished_at || Date.now() - Date.parse(run.finished_at) > DIFF_AFTER_CANCEL_WAIT_MS) return false;
    return !!(await this.chains.runArtifact(turn.tenant_id, run.id, 'workspace_base'));
  }

  /** Cancels its run (from any api process) and follows it; a turn whose run was never started ends here. */
  async cancel(turn: TurnRow, origin: RequestOrigin | null): Promise<string> {
    if (turn.task_id && turn.run_id) {
      await this.chains.cancelRun(turn.tenant_id, turn.task_id, turn.run_id, 'cancelled from agent chat', origin).catch((err: unknown) => {
        if (!(err instanceof DomainError) || err.status !== 409) throw err;
      });
      const after = await this.follow({ ...turn, cancel_requested: true });
      return isActiveTurn(after.status) ? 'cancelling' : after.status;
    }
    const ended = await this.turns.end(turn, { status: 'cancelled', content: '', error: { type: 'cancelled', message: 'cancelled before it started' } });
    return ended ? 'cancelled' : 'cancelling';
  }

  async recover(turn: TurnRow): Promise<void> {
    if (turn.run_id) await this.follow(turn);
    else if (Date.now() - new Date(turn.created_at).getTime() > START_GRACE_MS) {
      await this.turns.end(turn, {
        status: 'failed',
        content: '',
        error: { type: 'interrupted', message: 'the api process stopped before the turn started its run' },
      });
    }
  }
}
