import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { DomainError } from '@core/http/domain-error';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { ApprovalsService, planHash } from '@modules/approvals';
import { InferenceService, type InferenceResult, type InferenceTool } from '@modules/inference';
import { McpClientPool, type McpServerSpec, type McpTool, type McpToolSet } from '@modules/mcp';
import { type ExecutionContext, type ExecutionOutcome, ExecutorRegistry, type NewArtifact, type RunRunner, type StepOutcome } from '@modules/tasks';
import { BUILTIN_BY_NAME, BUILTIN_TOOLS, type BuiltinTool, ToolInputError, type ToolResult } from './builtin-tools';
import { type Conversation, parseConversation, startingHistory, type ToolCall } from './conversation';

/** At most this many tool calls in one model response (a larger one fails the turn). */
export const MAX_TOOL_CALLS_PER_RESPONSE = 16;
const AGENTS_FILES = ['AGENTS.md', 'CLAUDE.md'];
const AGENTS_MAX_BYTES = 8 * 1024;
const TOOL_RESULT_MAX_CHARS = 64 * 1024;

/**
 * The agent loop (seed 002/003, DESIGN §11): model call → tool calls → results → model call, until a final answer,
 * the turn cap, the budget, cancel, or a blank answer. Every model call and tool call is a step with a durable
 * dispatch record (RunWriter.step); the conversation is checkpointed after every model call and every tool result,
 * so a run taken over by another worker continues from its checkpoint: a completed call is replayed from its step,
 * never re-run; a side-effecting call whose result was not recorded is answered to the model as "outcome unknown".
 * Text deltas go to the run's live stream (LiveStreamBuffer, stream id = run id), not into run events.
 */
@Injectable()
export class AgentLoopRunner implements RunRunner, OnModuleInit {
  readonly kind = 'agent_loop';

  constructor(
    private readonly registry: ExecutorRegistry,
    private readonly inference: InferenceService,
    private readonly approvals: ApprovalsService,
    private readonly config: AppConfig,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
    private readonly mcp: McpClientPool,
  ) {}

  onModuleInit(): void {
    this.registry.registerRunner(this);
  }

  async execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    let mcp: McpToolSet | null = null;
    let outcome: ExecutionOutcome;
    try {
      if (ctx.task.mcpServers.length > 0) {
        try {
          mcp = await this.mcp.open(ctx.run.tenantId, ctx.task.mcpServers as McpServerSpec[], {
            workspace: ctx.workspace.path,
            network: ctx.workspace.network,
            signal: ctx.signal,
          });
        } catch (err) {
          return { status: 'failed', error: `MCP servers could not start: ${(err as Error).message}`, errorKind: 'mcp_unavailable' };
        }
      }
      outcome = await this.loop(ctx, mcp);
    } finally {
      await mcp?.release();
    }
    // The run's live stream ends with the run (a run waiting for an approval goes on later under the same id).
    if (outcome.status !== 'awaiting_approval') {
      await this.live
        .markDone(ctx.run.id)
        .catch((err: unknown) => rootLogger().warn({ err: String(err), run_id: ctx.run.id }, 'could not mark the live stream done'));
    }
    return outcome;
  }

  private async loop(ctx: ExecutionContext, mcp: McpToolSet | null): Promise<ExecutionOutcome> {
    const conv = await this.hydrate(ctx);
    const mcpTools = new Map((mcp?.tools ?? []).map((t) => [t.alias, t]));
    const tools: InferenceTool[] = [
      ...BUILTIN_TOOLS.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })),
      ...[...mcpTools.values()].map((t) => ({ type: 'function' as const, function: { name: t.alias, description: t.description, parameters: t.inputSchema } })),
    ];
    const calls = { mcp, mcpTools };
    for (;;) {
      if (ctx.signal.aborted) return { status: 'failed', error: 'cancelled', errorKind: 'cancelled' };
      if (conv.pending?.length) {
        if (conv.pending.length > MAX_TOOL_CALLS_PER_RESPONSE) {
          return {
            status: 'failed',
            error: `the model asked for ${conv.pending.length} tool calls in one response (at most ${MAX_TOOL_CALLS_PER_RESPONSE})`,
            errorKind: 'too_many_tool_calls',
          };
        }
        const gate = await this.gate(ctx, conv, calls.mcpTools);
        if (gate) return gate;
        while (conv.pending?.length) await this.dispatch(ctx, conv, calls);
      }
      if (conv.final !== undefined) {
        if (!conv.final.trim()) return { status: 'failed', error: 'the model ended with a blank final answer', errorKind: 'blank_final_answer' };
        return { status: 'completed', summary: { final_answer: conv.final, model_calls: conv.model_calls } };
      }
      if (conv.model_calls >= this.config.agent.maxTurns) {
        return {
          status: 'failed',
          error: `the agent made ${conv.model_calls} model calls without a final answer (GATEWAY_TASK_AGENT_LOOP_MAX_TURNS)`,
          errorKind: 'turn_limit_exceeded',
        };
      }
      const failed = await this.modelCall(ctx, conv, tools);
      if (failed) return failed;
    }
  }

  /**
   * The conversation to continue: this run's checkpoint (a run taken over, or requeued after an approval), else the
   * source run's for resume / continue / retry-from-turn (seed 003), else a fresh one.
   */
  private async hydrate(ctx: ExecutionContext): Promise<Conversation> {
    const own = parseConversation((await ctx.writer.latestArtifact('agent_conversation'))?.content ?? null);
    if (own) return own;
    if (ctx.run.resumedFromRunId) {
      const source = parseConversation((await ctx.writer.latestArtifact('agent_conversation', ctx.run.resumedFromRunId))?.content ?? null);
      if (source) {
        const input = ctx.run.checkpoint?.input as { continue_prompt?: string; retry_from_turn?: number } | undefined;
        return { ...startingHistory(source, input), next_step: ctx.firstStepIndex };
      }
    }
    return {
      messages: [
        { role: 'system', content: await this.systemPrompt(ctx) },
        { role: 'user', content: ctx.task.prompt },
      ],
      next_step: ctx.firstStepIndex,
      model_calls: 0,
      run_cost: 0,
    };
  }

  /** Machine line, operator prompt, the workspace's AGENTS.md or CLAUDE.md (≤ 8 KiB), the task's system_prompt. */
  private async systemPrompt(ctx: ExecutionContext): Promise<string> {
    const parts = [
      `You are Hecate's coding agent, running on a worker. Your workspace is ${ctx.workspace.path}; tool paths are relative to it. Use the tools to inspect and change it, then answer with a final message.`,
    ];
    if (this.config.agent.systemPrompt) parts.push(this.config.agent.systemPrompt);
    for (const name of AGENTS_FILES) {
      try {
        const text = (await readFile(join(ctx.workspace.path, name))).subarray(0, AGENTS_MAX_BYTES).toString('utf8');
        parts.push(`${name} from the workspace:\n${text}`);
        break;
      } catch {
        // not there
      }
    }
    if (ctx.task.systemPrompt) parts.push(ctx.task.systemPrompt);
    return parts.join('\n\n');
  }

  /** The checkpoint of a conversation, written in the same transaction as the step that produced it. */
  private checkpoint(conv: Conversation): NewArtifact {
    // `seq` orders a run's checkpoints (two can share a millisecond): the newest is the one with the highest next step.
    return {
      kind: 'agent_conversation',
      name: 'agent_conversation',
      mimeType: 'application/json',
      content: JSON.stringify(conv),
      metadata: { seq: conv.next_step },
    };
  }

  /**
   * One model call as a step. Its result transaction holds the step, the run's spend, the events and the new
   * checkpoint (the assistant message appended, its tool calls pending): a crash leaves either all of it or none.
   * Mutates `conv` to the state after the call; returns the run's failure, or null.
   */
  private async modelCall(ctx: ExecutionContext, conv: Conversation, tools: InferenceTool[]): Promise<ExecutionOutcome | null> {
    const { task, run, writer } = ctx;
    const turn = conv.model_calls + 1;
    const index = conv.next_step;
    const model = task.requestedModel || this.config.gateway.defaultModel;
    const prior = Number(run.priorCostMicrosUsd);
    let next: Conversation | undefined;
    const { outcome, replayed } = await writer.step(
      {
        index,
        kind: 'model',
        title: `Model call ${turn}`,
        toolName: 'model_call',
        input: { turn, model, messages: conv.messages.length },
        // A model call has no side effect outside the run: after a crash it may be made again.
        idempotent: true,
        startEvents: () => [
          { type: 'turn.started', data: { turn } },
          { type: 'model.call.started', data: { turn, model_call_index: turn, model, provider: task.requestedProvider || undefined } },
        ],
      },
      async (): Promise<StepOutcome> => {
        let costCapMicros: number | undefined;
        if (task.budgetMicrosUsd > 0) {
          costCapMicros = task.budgetMicrosUsd - prior - conv.run_cost;
          if (costCapMicros <= 0) return { status: 'failed', error: `budget of ${task.budgetMicrosUsd} micro-USD is spent`, errorKind: 'budget_exceeded' };
        }
        let result: InferenceResult;
        try {
          const live = await this.inference.streamLive(
            { messages: conv.messages, model, provider: task.requestedProvider || undefined, tools, max_tokens: this.config.agent.maxTokens },
            { tenantId: run.tenantId, origin: writer.ref.origin, signal: ctx.signal, endpoint: 'agent_loop', costCapMicros },
            { streamId: run.id },
          );
          for await (const _frame of live.frames) {
            // Deltas are on the live stream; the loop needs only the assembled reply.
          }
          result = await live.result;
        } catch (err) {
          const kind = err instanceof DomainError ? err.type : 'model_error';
          return { status: 'failed', error: err instanceof Error ? err.message : String(err), errorKind: kind };
        }
        const calls = result.tool_calls as ToolCall[];
        const cost = result.cost_micros_usd;
        next = {
          messages: [...conv.messages, { role: 'assistant', content: result.text || null, ...(calls.length ? { tool_calls: calls } : {}) }],
          next_step: index + 1,
          model_calls: turn,
          run_cost: conv.run_cost + cost,
          ...(calls.length ? { pending: calls } : { final: result.text }),
        };
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
        return {
          status: 'completed',
          result: JSON.stringify({ text: result.text, tool_calls: calls, cost_micros_usd: cost }),
          outputSummary: { ...costs, stop_reason: result.stop_reason, tool_calls: calls.length },
          events: [
            { type: 'model.call.completed', data: { ...costs, stop_reason: result.stop_reason } },
            ...calls.map((c) => ({
              type: 'assistant.tool_call_proposed',
              data: { turn, tool_call_id: c.id, tool_name: c.function.name, arguments: c.function.arguments },
            })),
            { type: 'turn.completed', data: costs },
            ...(final ? [{ type: 'assistant.final_answer', data: { turn, text: result.text } }] : []),
          ],
          artifacts: [this.checkpoint(next), ...(final ? [{ kind: 'summary', name: 'final_answer', mimeType: 'text/markdown', content: result.text }] : [])],
          finishIn: (tx) =>
            writer.recordUsageIn(tx, { model: result.model, provider: result.provider, providerKind: result.provider_kind, addCostMicrosUsd: cost }),
        };
      },
    );
    if (outcome.status !== 'completed') {
      return { status: 'failed', error: outcome.error || 'model call failed', errorKind: outcome.errorKind || 'model_error' };
    }
    if (replayed || !next) {
      // Completed by an earlier attempt past our checkpoint (not expected: the checkpoint commits with the step).
      const r = JSON.parse(outcome.result ?? '{}') as { text?: string; tool_calls?: ToolCall[]; cost_micros_usd?: number };
      const calls = r.tool_calls ?? [];
      next = {
        messages: [...conv.messages, { role: 'assistant', content: r.text || null, ...(calls.length ? { tool_calls: calls } : {}) }],
        next_step: index + 1,
        model_calls: turn,
        run_cost: conv.run_cost + (r.cost_micros_usd ?? 0),
        ...(calls.length ? { pending: calls } : { final: r.text ?? '' }),
      };
      await writer.addArtifact(this.checkpoint(next));
    }
    replaceState(conv, next);
    return null;
  }

  /**
   * Gated calls of one response wait under one `agent_loop_tool_call` approval listing each call's exact arguments;
   * approving requeues the run, which dispatches exactly those calls (the approval's hash proves it) with no new model call.
   */
  private async gate(ctx: ExecutionContext, conv: Conversation, mcpTools: Map<string, McpTool>): Promise<ExecutionOutcome | null> {
    // Built-in tools by GATEWAY_TASK_APPROVAL_POLICIES, MCP tools by their server's approval_policy.
    const needsApproval = (name: string) => {
      const mcp = mcpTools.get(name);
      return mcp ? mcp.approvalPolicy === 'require_approval' : this.approvals.toolRequiresApproval(name);
    };
    const gated = conv.pending!.filter((c) => needsApproval(c.function.name));
    if (gated.length === 0) return null;
    const details = { tool_calls: gated.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) };
    const hash = planHash(details);
    const approvals = await this.approvals.listForRun(ctx.run.tenantId, ctx.run.id);
    if (approvals.some((a) => a.kind === 'agent_loop_tool_call' && a.status === 'approved' && a.actionHash === hash)) return null;
    await ctx.writer.pauseForApproval({
      kind: 'agent_loop_tool_call',
      reason: `the agent wants to use ${[...new Set(gated.map((c) => c.function.name))].join(', ')}`,
      actionSummary: gated.map((c) => `${c.function.name} ${c.function.arguments}`.slice(0, 500)),
      details,
    });
    return { status: 'awaiting_approval' };
  }

  /**
   * `tool_progress` frames of one tool call on the run's live stream (seed 004): appended in order, never in the
   * conversation; `closed: true` ends them. A buffer outage loses progress, never the call.
   */
  private progressOf(runId: string, toolCallId: string): { push(stream: 'stdout' | 'stderr', text: string): void; close(): Promise<void> } {
    let chain: Promise<unknown> = Promise.resolve();
    const append = (frame: Record<string, unknown>) => {
      chain = chain.then(() => this.live.append(runId, JSON.stringify(frame))).catch(() => undefined);
    };
    return {
      push: (stream, text) => {
        if (text) append({ type: 'tool_progress', tool_call_id: toolCallId, text, stream, closed: false, ts: Date.now() / 1000 });
      },
      close: async () => {
        append({ type: 'tool_progress', tool_call_id: toolCallId, text: '', stream: 'stdout', closed: true, ts: Date.now() / 1000 });
        await chain;
      },
    };
  }

  /**
   * The first pending tool call as a step; its result and the new checkpoint commit together. A completed call is
   * never run again; a side-effecting one cut off by a crash is answered as "outcome unknown".
   */
  private async dispatch(ctx: ExecutionContext, conv: Conversation, calls: { mcp: McpToolSet | null; mcpTools: Map<string, McpTool> }): Promise<void> {
    const [call, ...rest] = conv.pending!;
    const index = conv.next_step;
    const mcpTool = calls.mcpTools.get(call.function.name);
    const tool = mcpTool ? mcpToolAsBuiltin(mcpTool, calls.mcp!) : BUILTIN_BY_NAME.get(call.function.name);
    let args: Record<string, unknown> = {};
    let inputError = '';
    try {
      const parsed: unknown = JSON.parse(call.function.arguments || '{}');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
      else inputError = 'arguments must be a JSON object';
    } catch {
      inputError = 'arguments are not valid JSON';
    }
    const after = (content: string, isError: boolean): Conversation => ({
      ...conv,
      messages: [...conv.messages, { role: 'tool', tool_call_id: call.id, content, ...(isError ? { tool_error: true } : {}) }],
      next_step: index + 1,
      pending: rest.length ? rest : undefined,
    });
    let next: Conversation | undefined;
    const { outcome, replayed } = await ctx.writer.step(
      {
        index,
        kind: 'tool',
        title: call.function.name,
        toolName: call.function.name,
        input: { tool_call_id: call.id, arguments: args, classification: tool?.classification ?? 'unknown' },
        idempotent: tool ? tool.classification !== 'side_effecting' : true,
      },
      async (): Promise<StepOutcome> => {
        let result: ToolResult;
        if (mcpTool?.approvalPolicy === 'block') {
          const reason = `server ${mcpTool.server} has approval_policy=block`;
          const text = `blocked by policy: ${reason}; the tool was not called`;
          next = after(text, true);
          return {
            status: 'failed',
            result: JSON.stringify({ text, is_error: true }),
            error: text,
            errorKind: 'policy_blocked',
            events: [{ type: 'policy.tool_blocked', data: { tool_name: call.function.name, kind: 'mcp', policy: 'block', reason } }],
            eventData: { mcp_server: mcpTool.server, mcp_tool: mcpTool.name, result: 'blocked' },
            artifacts: [this.checkpoint(next)],
          };
        }
        if (!tool) result = { text: `unknown tool ${call.function.name}`, isError: true };
        else if (inputError) result = { text: inputError, isError: true };
        else {
          try {
            const progress = this.config.agent.toolProgress ? this.progressOf(ctx.run.id, call.id) : undefined;
            try {
              result = await tool.run(args, {
                workspace: ctx.workspace,
                sandbox: this.registry.sandbox(),
                config: this.config,
                signal: ctx.signal,
                timeoutMs: ctx.task.timeoutMs || ctx.config.defaultTimeoutMs,
                progress: progress?.push,
              });
            } finally {
              await progress?.close();
            }
          } catch (err) {
            result = { text: err instanceof ToolInputError ? `invalid arguments: ${err.message}` : (err as Error).message, isError: true };
          }
        }
        const text = result.text.length > TOOL_RESULT_MAX_CHARS ? `${result.text.slice(0, TOOL_RESULT_MAX_CHARS)}\n[truncated]` : result.text;
        next = after(text, result.isError);
        return {
          status: result.isError ? 'failed' : 'completed',
          result: JSON.stringify({ text, is_error: result.isError }),
          exitCode: result.exitCode,
          outputSummary: result.summary ?? {},
          error: result.isError ? text.slice(0, 500) : undefined,
          errorKind: result.isError ? 'tool_error' : undefined,
          eventData: mcpTool ? { mcp_server: mcpTool.server, mcp_tool: mcpTool.name, result: result.isError ? 'tool_error' : 'dispatched' } : undefined,
          artifacts: [...(result.artifacts ?? []), this.checkpoint(next)],
        };
      },
    );
    if (replayed || !next) {
      let content: string;
      let isError: boolean;
      if (outcome.errorKind === 'ambiguous_side_effect') {
        content = 'outcome unknown after a restart: the worker running this tool call was lost; it was not run again';
        isError = true;
      } else {
        try {
          const r = JSON.parse(outcome.result ?? '') as { text: string; is_error: boolean };
          content = r.text;
          isError = r.is_error;
        } catch {
          content = outcome.error || outcome.status;
          isError = outcome.status !== 'completed';
        }
      }
      next = after(content, isError);
      await ctx.writer.addArtifact(this.checkpoint(next));
    }
    replaceState(conv, next);
  }
}

/** Moves the loop's state forward in place. */
function replaceState(conv: Conversation, next: Conversation): void {
  for (const key of Object.keys(conv) as (keyof Conversation)[]) delete conv[key];
  Object.assign(conv, next);
}

/** An MCP tool in the loop's tool shape: classified by its annotations (DESIGN §11.6), called through the pool. */
function mcpToolAsBuiltin(tool: McpTool, set: McpToolSet): BuiltinTool {
  const a = tool.annotations;
  return {
    name: tool.alias,
    description: tool.description,
    parameters: tool.inputSchema,
    classification: a.readOnlyHint ? 'read_only' : a.idempotentHint ? 'idempotent' : 'side_effecting',
    async run(args, ctx) {
      const r = await set.call(tool.alias, args, {
        signal: ctx.signal,
        timeoutMs: ctx.timeoutMs,
        onProgress: ctx.progress ? (text) => ctx.progress!('stdout', text) : undefined,
      });
      return { text: r.text, isError: r.isError, summary: { mcp_server: tool.server, mcp_tool: tool.name } };
    },
  };
}
