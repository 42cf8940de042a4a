import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { retryTransient } from '@core/database/retry-transient';
import { DomainError } from '@core/http/domain-error';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { InferenceService, type InferenceResult, type InferenceTool, type LiveDeltaFrame } from '@modules/inference';
import type { ExecutionContext, ExecutionOutcome, StepOutcome, StepSpec } from '@modules/tasks';
import { checkpointArtifact, type Conversation, type NextStep, preview, replaceState, type ToolCall } from './conversation';

/** The agent loop's model calls: one step each, through the one model-calling service (docs/design.md §11.1). */
@Injectable()
export class AgentModelCalls {
  constructor(
    private readonly inference: InferenceService,
    private readonly config: AppConfig,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
  ) {}

  /**
   * What a lost attempt of this model call streamed after `after` (the previous call's last frame): whether it streamed
   * any delta, and its text as the prefill a model may continue ('' when it holds what a prefill cannot carry:
   * reasoning, tool-call pieces).
   */
  private async partialOf(streamId: string, after: number): Promise<{ text: string; streamed: boolean }> {
    let text = '';
    let streamed = false;
    let plain = true;
    let index = after;
    try {
      for (;;) {
        const r = await this.live.read(streamId, index, { limit: 1000 });
        for (const c of r.chunks) {
          const f = JSON.parse(c.data) as LiveDeltaFrame & { type?: string };
          if (f.type === 'reset') [text, streamed, plain] = ['', false, true];
          else if (f.type === undefined) {
            streamed = true;
            if (f.reasoning !== undefined || f.reasoning_signature !== undefined || f.tool_calls !== undefined) plain = false;
            text += f.content ?? '';
          }
          index = c.index;
        }
        if (r.chunks.length === 0) return { text: plain ? text : '', streamed };
      }
    } catch {
      return { text: '', streamed: true }; // No buffer: the call is made from the start.
    }
  }

  /** The model call the loop makes next from `conv`, as a step. */
  spec(ctx: ExecutionContext, conv: Conversation): StepSpec {
    const turn = conv.model_calls + 1;
    const model = ctx.task.requestedModel || this.config.gateway.defaultModel;
    return {
      index: conv.next_step,
      kind: 'model',
      title: `Model call ${turn}`,
      toolName: 'model_call',
      input: { turn, model, messages: conv.messages.length },
      // A model call has no side effect outside the run: after a crash it may be made again.
      idempotent: true,
      startEvents: () => [
        { type: 'turn.started', data: { turn } },
        { type: 'model.call.started', data: { turn, model_call_index: turn, model, provider: ctx.task.requestedProvider || undefined } },
      ],
    };
  }

  /**
   * One model call as a step. Its result transaction holds the step, the run's spend, the events and the new
   * checkpoint (the assistant message appended, its tool calls pending): a crash leaves either all of it or none.
   * Mutates `conv` to the state after the call; returns the run's failure, or null. `plan` names the step that follows
   * from the state after the call (its dispatch record then commits with the result).
   */
  async call(ctx: ExecutionContext, conv: Conversation, tools: InferenceTool[], plan: NextStep): Promise<ExecutionOutcome | null> {
    const { task, run, writer } = ctx;
    const prior = Number(run.priorCostMicrosUsd);
    let next: Conversation | undefined;
    const { outcome, replayed } = await writer.step(this.spec(ctx, conv), async (_step, dispatch): Promise<StepOutcome> => {
      let costCapMicros: number | undefined;
      if (task.budgetMicrosUsd > 0) {
        costCapMicros = task.budgetMicrosUsd - prior - conv.run_cost;
        if (costCapMicros <= 0) return { status: 'failed', error: `budget of ${task.budgetMicrosUsd} micro-USD is spent`, errorKind: 'budget_exceeded' };
      }
      const called = await this.stream(ctx, conv, tools, costCapMicros, dispatch.again);
      if ('failure' in called) return called.failure;
      next = afterCall(conv, called.result, called.liveIndex);
      return { ...completedStep(next, called.result, prior), next: await plan(next) };
    });
    if (outcome.status !== 'completed') {
      return { status: 'failed', error: outcome.error || 'model call failed', errorKind: outcome.errorKind || 'model_error' };
    }
    if (replayed || !next) {
      // Completed by an earlier attempt past our checkpoint (not expected: the checkpoint commits with the step).
      const r = JSON.parse(outcome.result ?? '{}') as { text?: string; tool_calls?: ToolCall[]; cost_micros_usd?: number };
      next = afterCall(conv, { text: r.text ?? '', tool_calls: r.tool_calls ?? [], cost_micros_usd: r.cost_micros_usd ?? 0 });
      await writer.addArtifact(checkpointArtifact(next));
    }
    replaceState(conv, next);
    return null;
  }

  /**
   * The model call itself, teed to the run's live stream. Made again after a takeover (`again`): what the lost attempt
   * streamed (after the previous call's frames) is continued by a model that continues prefills, else reset on the live
   * stream (docs/takeover.md).
   */
  private async stream(
    ctx: ExecutionContext,
    conv: Conversation,
    tools: InferenceTool[],
    costCapMicros: number | undefined,
    again: boolean,
  ): Promise<{ result: InferenceResult; liveIndex: number | undefined } | { failure: StepOutcome }> {
    const { task, run, writer } = ctx;
    const lost = again ? await this.partialOf(run.id, conv.live_index ?? 0) : undefined;
    const partial = lost?.text ?? '';
    try {
      // Routing reads Postgres before anything is sent upstream: a dropped connection there is retried (nothing was billed).
      const live = await retryTransient(() =>
        this.inference.streamLive(
          {
            messages: conv.messages,
            model: task.requestedModel || this.config.gateway.defaultModel,
            provider: task.requestedProvider || undefined,
            tools,
            max_tokens: this.config.agent.maxTokens,
            ...(partial ? { continuation: partial } : {}),
          },
          {
            tenantId: run.tenantId,
            apiKeyId: task.apiKeyId ?? undefined,
            agentId: task.agentId ?? undefined,
            origin: writer.ref.origin,
            signal: ctx.signal,
            endpoint: 'agent_loop',
            costCapMicros,
          },
          { streamId: run.id, unindexed: true, ...(lost?.streamed ? { restartFrom: (conv.live_index ?? 0) + 1 } : {}) },
        ),
      );
      for await (const _frame of live.frames) {
        // Deltas are on the live stream; the loop needs only the assembled reply.
      }
      let result = await live.result;
      if (live.continued) result = { ...result, text: partial + result.text };
      return { result, liveIndex: live.lastIndex() || conv.live_index };
    } catch (err) {
      const kind = err instanceof DomainError ? err.type : 'model_error';
      return { failure: { status: 'failed', error: err instanceof Error ? err.message : String(err), errorKind: kind } };
    }
  }
}

/** The conversation after a model call: its reply appended, tool calls pending or the final answer set. */
function afterCall(conv: Conversation, result: Pick<InferenceResult, 'text' | 'tool_calls' | 'cost_micros_usd'>, liveIndex?: number): Conversation {
  const calls = result.tool_calls as ToolCall[];
  return {
    messages: [...conv.messages, { role: 'assistant', content: result.text || null, ...(calls.length ? { tool_calls: calls } : {}) }],
    next_step: conv.next_step + 1,
    checkpointed: conv.checkpointed,
    model_calls: conv.model_calls + 1,
    run_cost: conv.run_cost + result.cost_micros_usd,
    ...(liveIndex ? { live_index: liveIndex } : {}),
    ...(calls.length ? { pending: calls } : { final: result.text }),
  };
}

/** The model call's step result: previews in the step and events, the reply once in the checkpoint (and a final answer's summary). */
function completedStep(next: Conversation, result: InferenceResult, prior: number): Omit<StepOutcome, 'next'> {
  const turn = next.model_calls;
  const calls = result.tool_calls as ToolCall[];
  const cost = result.cost_micros_usd;
  const costs = {
    turn,
    model_call_index: turn,
    provider: result.provider,
    model: result.model,
    input_tokens: result.usage.input_tokens,
    output_tokens: result.usage.output_tokens,
    cost_micros_usd: cost,
    run_cost_micros_usd: next.run_cost,
    task_cost_micros_usd: prior + next.run_cost,
  };
  const final = calls.length === 0 && result.text.trim() !== '';
  const text = preview(result.text);
  return {
    status: 'completed',
    result: JSON.stringify({
      text: text.text,
      ...(text.truncated ? { text_bytes: text.bytes, stored_in: 'agent_conversation' } : {}),
      tool_calls: calls.map((c) => ({ ...c, function: { name: c.function.name, arguments: preview(c.function.arguments).text } })),
      cost_micros_usd: cost,
    }),
    outputSummary: { ...costs, stop_reason: result.stop_reason, tool_calls: calls.length },
    events: [
      { type: 'model.call.completed', data: { ...costs, stop_reason: result.stop_reason } },
      ...calls.map((c) => ({
        type: 'assistant.tool_call_proposed',
        data: { turn, tool_call_id: c.id, tool_name: c.function.name, ...argumentsPreview(c.function.arguments) },
      })),
      { type: 'turn.completed', data: costs },
      ...(final ? [{ type: 'assistant.final_answer', data: { turn, ...text } }] : []),
    ],
    artifacts: [checkpointArtifact(next), ...(final ? [{ kind: 'summary', name: 'final_answer', mimeType: 'text/markdown', content: result.text }] : [])],
    usage: { model: result.model, provider: result.provider, providerKind: result.provider_kind, addCostMicrosUsd: cost },
  };
}

/** Tool arguments as an event shows them: whole when small, else their start (`arguments_truncated`, `arguments_bytes`). */
function argumentsPreview(args: string): Record<string, unknown> {
  const p = preview(args);
  return p.truncated ? { arguments: p.text, arguments_truncated: true, arguments_bytes: p.bytes } : { arguments: args };
}
