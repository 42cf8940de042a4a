import { Inject, Injectable } from '@nestjs/common';
import type { SseOpener } from '@core/http/sse';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { MetricsService } from '@core/metrics/metrics.service';
import type { RequestOrigin } from '@core/context/request-context';
import { InvalidRequestError } from '@core/http/domain-error';
import { TaskRunChainsService } from '@modules/tasks';
import { assistantTurns, parseConversation, type Conversation } from './conversation';

/** Live-stream frames with an event of their own (the run's approvals are put there as they commit); the rest are deltas. */
const LIVE_TYPED = new Set(['tool_progress', 'reset', 'approval.requested', 'approval.resolved']);

/**
 * `continue` and `retry-from-turn`: new runs of an agent_loop task that start from a terminal run's saved conversation
 * (its workspace reused, its cost carried into `prior_cost_micros_usd`). 400 for other kinds, an empty prompt, a turn
 * out of range or a missing conversation; 409 while the source run is active.
 */
@Injectable()
export class AgentLoopRunsService {
  constructor(
    private readonly chains: TaskRunChainsService,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * A run's live stream over SSE (docs/design.md §11.4): the model's text deltas (`event: delta`), running tools' output
   * (`event: tool_progress`) and, when a model call is made again after a takeover, `event: reset` (docs/takeover.md), each with `id:` = its index in the stream, so `Last-Event-ID` resumes after it; then
   * `event: done` with the run's status. When the buffer no longer has the stream (expired, or another deployment's)
   * the terminal state comes from Postgres with `resume_fallback: true`; a stalled tail re-reads the run's status.
   */
  async serveLive(open: SseOpener, tenantId: string, taskId: string, runId: string, after: number): Promise<void> {
    await this.chains.getRun(tenantId, taskId, runId);
    const sse = open();
    let index = after;
    let resumeUncounted = after > 0;
    while (sse.isOpen) {
      const r = await this.live.read(runId, index, { blockMs: 2000, limit: 500 });
      if (resumeUncounted) {
        resumeUncounted = false;
        this.metrics.liveStreamResumed(r.expired ? 'fallback' : 'buffer');
      }
      for (const chunk of r.chunks) {
        const typed = (JSON.parse(chunk.data) as { type?: string }).type;
        const type = typed && LIVE_TYPED.has(typed) ? typed : 'delta';
        sse.send({ id: chunk.index, event: type, data: chunk.data });
        index = chunk.index;
      }
      if (r.done) return this.finishLive(sse, tenantId, taskId, runId, false);
      if (r.chunks.length > 0) continue;
      const run = await this.chains.getRun(tenantId, taskId, runId);
      if (['completed', 'failed', 'cancelled'].includes(run.status)) return this.finishLive(sse, tenantId, taskId, runId, r.expired);
      if (r.expired) await new Promise((res) => setTimeout(res, 250));
    }
  }

  private async finishLive(sse: ReturnType<SseOpener>, tenantId: string, taskId: string, runId: string, fallback: boolean): Promise<void> {
    // The stream is marked done just before the run's result commits: give that commit a moment to land.
    let run = await this.chains.getRun(tenantId, taskId, runId);
    for (let i = 0; i < 40 && !['completed', 'failed', 'cancelled', 'awaiting_approval'].includes(run.status); i++) {
      await new Promise((res) => setTimeout(res, 50));
      run = await this.chains.getRun(tenantId, taskId, runId);
    }
    sse.send({ event: 'done', data: JSON.stringify({ run_id: runId, status: run.status, ...(fallback ? { resume_fallback: true } : {}) }) });
    sse.end();
  }

  async continue(tenantId: string, taskId: string, runId: string, prompt: string, origin: RequestOrigin | null) {
    await this.agentTask(tenantId, taskId);
    if (!prompt.trim()) throw new InvalidRequestError('prompt is required to continue a run', { details: { field: 'prompt' } });
    await this.conversationOf(tenantId, taskId, runId);
    return this.chains.attemptFrom(tenantId, taskId, runId, { trigger: 'continue', reason: 'continue', input: { continue_prompt: prompt }, origin });
  }

  async retryFromTurn(tenantId: string, taskId: string, runId: string, turn: number, reason: string, origin: RequestOrigin | null) {
    await this.agentTask(tenantId, taskId);
    const turns = assistantTurns(await this.conversationOf(tenantId, taskId, runId));
    if (turn < 1 || turn > turns) {
      throw new InvalidRequestError(`turn must be between 1 and ${turns} (the run's assistant turns)`, { details: { field: 'turn', turns } });
    }
    return this.chains.attemptFrom(tenantId, taskId, runId, { trigger: 'retry_from_turn', reason, input: { retry_from_turn: turn }, origin });
  }

  private async agentTask(tenantId: string, taskId: string): Promise<void> {
    if ((await this.chains.executionKind(tenantId, taskId)) !== 'agent_loop')
      throw new InvalidRequestError(`task ${taskId} is not an agent_loop task`, { details: { field: 'execution_kind' } });
  }

  /** The terminal source run's saved conversation (409 while the run is active, 400 when it has none). */
  private async conversationOf(tenantId: string, taskId: string, runId: string): Promise<Conversation> {
    const conversation = parseConversation(await this.chains.terminalRunArtifact(tenantId, taskId, runId, 'agent_conversation'));
    if (!conversation) throw new InvalidRequestError(`run ${runId} has no agent_conversation artifact to start from`, { details: { field: 'run_id' } });
    return conversation;
  }
}
