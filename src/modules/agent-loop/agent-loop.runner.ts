import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { storableValue } from '@core/database/storable';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { rootLogger } from '@core/logging/logger';
import { ApprovalsService, planHash } from '@modules/approvals';
import type { InferenceTool } from '@modules/inference';
import { MAX_TOOLS_PER_REQUEST, McpClientPool, type McpServerSpec, type McpTool, type McpToolSet } from '@modules/mcp';
import { AgentModelCalls } from './agent-model-calls';
import { AgentToolCalls, type McpCalls } from './agent-tool-calls';
import { type ExecutionContext, type ExecutionOutcome, type RunRunner, RunRunnerKind, type StepSpec } from '@modules/tasks';
import { readHead, withWorkspaceFile } from '@modules/workspaces';
import { BUILTIN_TOOLS } from './builtin-tools';
import { checkpointArtifact, type Conversation, parseConversation, preview, replaceState, startingHistory } from './conversation';
import { type ConsumedGuidance, GUIDANCE_SOURCE, type GuidanceSource } from './guidance-source';

/** At most this many tool calls in one model response (a larger one fails the turn). */
export const MAX_TOOL_CALLS_PER_RESPONSE = 16;
const AGENTS_FILES = ['AGENTS.md', 'CLAUDE.md'];
const AGENTS_MAX_BYTES = 8 * 1024;
/** How long a cancelled run's last workspace diff may take (its own signal is aborted by then). */
const DIFF_AFTER_CANCEL_MS = 30_000;

/** The built-in tools a run offers the model: the task's `builtin_tools` (a saved agent's), else all. */
const offeredBuiltins = (task: ExecutionContext['task']) =>
  task.builtinTools ? BUILTIN_TOOLS.filter((t) => task.builtinTools!.includes(t.name)) : BUILTIN_TOOLS;

/**
 * The agent loop (docs/api.md §3 and §4, docs/design.md §11): model call → tool calls → results → model call, until a final answer,
 * the turn cap, the budget, cancel, or a blank answer. Every model call and tool call is a step with a durable
 * dispatch record (RunWriter.step); the conversation is checkpointed after every model call and every tool result,
 * so a run taken over by another worker continues from its checkpoint: a completed call is replayed from its step,
 * never re-run; a side-effecting call whose result was not recorded is answered to the model as "outcome unknown".
 * Text deltas go to the run's live stream (LiveStreamBuffer, stream id = run id), not into run events.
 */
@Injectable()
@RunRunnerKind()
export class AgentLoopRunner implements RunRunner {
  readonly kind = 'agent_loop';

  constructor(
    private readonly approvals: ApprovalsService,
    private readonly config: AppConfig,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
    private readonly mcp: McpClientPool,
    private readonly models: AgentModelCalls,
    private readonly tools: AgentToolCalls,
    @Inject(GUIDANCE_SOURCE) private readonly guidance: GuidanceSource,
  ) {}

  async execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    let mcp: McpToolSet | null = null;
    let outcome: ExecutionOutcome;
    try {
      if (ctx.task.mcpServers.length > 0) {
        try {
          mcp = await this.mcp.open(ctx.run.tenantId, ctx.task.mcpServers as McpServerSpec[], {
            workspace: ctx.workspace.path,
            signal: ctx.signal,
          });
        } catch (err) {
          return { status: 'failed', error: `MCP servers could not start: ${(err as Error).message}`, errorKind: 'mcp_unavailable' };
        }
        if (mcp.tools.length === 0) {
          // The task asked for MCP tools and none came: a model call without them would answer as if they did not exist.
          const names = (ctx.task.mcpServers as McpServerSpec[]).map((s) => s.name).join(', ');
          return {
            status: 'failed',
            error: `the run's MCP servers (${names}) offered no tools; the model was not called without them`,
            errorKind: 'mcp_no_tools',
          };
        }
        const builtins = offeredBuiltins(ctx.task).length;
        const total = builtins + mcp.tools.length;
        if (total > MAX_TOOLS_PER_REQUEST) {
          const counts = [...new Set(mcp.tools.map((t) => t.server))].map((server) => `${server}: ${mcp!.tools.filter((t) => t.server === server).length}`);
          return {
            status: 'failed',
            error: `the run would offer the model ${total} tools (${builtins} built-in; MCP ${counts.join(', ')}); at most ${MAX_TOOLS_PER_REQUEST} fit in one model request`,
            errorKind: 'too_many_tools',
          };
        }
      }
      const base = await this.diffBase(ctx);
      try {
        outcome = await this.loop(ctx, mcp);
      } catch (err) {
        // Cancelled mid-step (its write refused): what the run changed so far is still its diff (an Agent Chat turn's files).
        if (base && ctx.signal.aborted) await this.captureDiff(ctx, base);
        throw err;
      }
      if (base && outcome.status !== 'awaiting_approval') await this.captureDiff(ctx, base);
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

  /**
   * A git workspace's state when the run began (a tree id, kept as the `workspace_base` artifact so a run taken over or
   * resumed after an approval keeps its first base): the run's changes are everything since (docs/api.md §4 changed files).
   * A workspace that was no git work tree then has no base and no artifact: once the run's loop has begun (it has a
   * checkpoint), a missing base means that, and none is taken later (it would diff only part of the run).
   */
  private async diffBase(ctx: ExecutionContext): Promise<string | null> {
    if (ctx.workspace.readOnly) return null;
    const saved = await ctx.writer.latestArtifact('workspace_base');
    // An empty one: saved so by an earlier version for a workspace that was no git work tree.
    if (saved) return saved.content || null;
    if (await ctx.writer.latestArtifact('agent_conversation')) return null;
    const tree = await this.tools
      .workspaceGit(ctx.workspace.path, ctx.signal)
      .tree()
      // git failing here counts as a workspace that is no git work tree: no base, so no diff of the run is captured.
      .catch(() => null);
    if (tree) {
      await ctx.writer.addArtifact({
        kind: 'workspace_base',
        name: 'workspace_base',
        content: tree,
        description: 'git tree of the workspace when the run began',
      });
    }
    return tree;
  }

  /**
   * The run's changes as a unified diff (`diff` artifact `workspace_diff`, with the base tree in its metadata). After a
   * cancel (the run's signal aborted, its lease released) it is still taken, bounded, and kept as the cancelled run's.
   */
  private async captureDiff(ctx: ExecutionContext, base: string): Promise<void> {
    const cancelled = ctx.signal.aborted;
    try {
      const signal = cancelled ? AbortSignal.timeout(DIFF_AFTER_CANCEL_MS) : ctx.signal;
      const diff = await this.tools.workspaceGit(ctx.workspace.path, signal).diff(base);
      if (diff === null) return;
      const artifact = { kind: 'diff', name: 'workspace_diff', mimeType: 'text/x-diff', content: diff, metadata: { base_tree: base } };
      if (cancelled) await ctx.writer.addArtifactAfterCancel(artifact);
      else await ctx.writer.addArtifact(artifact);
    } catch (err) {
      rootLogger().warn({ run_id: ctx.run.id, err: String(err) }, 'workspace diff not captured');
    }
  }

  private async loop(ctx: ExecutionContext, mcp: McpToolSet | null): Promise<ExecutionOutcome> {
    const conv = await this.hydrate(ctx);
    const mcpTools = new Map((mcp?.tools ?? []).map((t) => [t.alias, t]));
    const tools: InferenceTool[] = [
      ...offeredBuiltins(ctx.task).map((t) => ({
        type: 'function' as const,
        function: { name: t.name, description: t.description, parameters: t.parameters },
      })),
      ...[...mcpTools.values()].map((t) => ({ type: 'function' as const, function: { name: t.alias, description: t.description, parameters: t.inputSchema } })),
    ];
    const calls = { mcp, mcpTools, builtins: ctx.task.builtinTools ? new Set(ctx.task.builtinTools) : null };
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
        while (conv.pending?.length) {
          // Guidance is looked for while the response's last tool call runs (not after it, on the hot path), so the model
          // call after it can be dispatched with that call's result; guidance sent later waits for the next model call.
          // A failed check counts as guidance waiting: no dispatch ahead, takeGuidance looks again.
          const guidance = conv.pending.length === 1 ? this.guidanceWaiting(ctx).catch(() => true) : Promise.resolve(true);
          await this.tools.dispatch(ctx, conv, calls, async (after) => this.nextStep(ctx, after, calls, !(await guidance)));
        }
      }
      if (conv.final !== undefined) {
        if (!conv.final.trim()) return { status: 'failed', error: 'the model ended with a blank final answer', errorKind: 'blank_final_answer' };
        // The answer itself is the run's `summary` artifact; run.finished carries its start.
        const answer = preview(conv.final);
        return {
          status: 'completed',
          summary: { final_answer: answer.text, ...(answer.truncated ? { final_answer_bytes: answer.bytes } : {}), model_calls: conv.model_calls },
        };
      }
      if (conv.model_calls >= this.maxTurns(ctx)) {
        return {
          status: 'failed',
          error: `the agent made ${conv.model_calls} model calls without a final answer (GATEWAY_TASK_AGENT_LOOP_MAX_TURNS)`,
          errorKind: 'turn_limit_exceeded',
        };
      }
      if (!ctx.writer.isDispatched(conv.next_step)) await this.takeGuidance(ctx, conv);
      const failed = await this.models.call(ctx, conv, tools, (after) => this.nextStep(ctx, after, calls, false));
      if (failed) return failed;
    }
  }

  /**
   * The step that follows a state of the loop with nothing in between, so its dispatch record can commit with the
   * result that led to it: the first pending tool call when no call of the response waits for an approval, else the
   * next model call (when `modelCall`: no guidance was waiting) unless the run ends. Undefined otherwise.
   */
  private nextStep(ctx: ExecutionContext, after: Conversation, calls: McpCalls, modelCall: boolean): StepSpec | undefined {
    if (ctx.signal.aborted) return undefined;
    if (after.pending?.length) {
      if (after.pending.length > MAX_TOOL_CALLS_PER_RESPONSE) return undefined;
      if (after.pending.some((c) => this.needsApproval(ctx, c.function.name, calls.mcpTools))) return undefined;
      return this.tools.spec(after, calls);
    }
    if (!modelCall || after.final !== undefined || after.model_calls >= this.maxTurns(ctx)) return undefined;
    return this.models.spec(ctx, after);
  }

  /** Only an Agent Chat turn's loop can be sent guidance: another run asks nothing. */
  private async guidanceWaiting(ctx: ExecutionContext): Promise<boolean> {
    return ctx.task.agentChat && this.guidance.pendingFor(ctx.run.tenantId, ctx.run.id);
  }

  /** Built-in tools by GATEWAY_TASK_APPROVAL_POLICIES, MCP tools by their server's approval_policy. */
  private needsApproval(ctx: ExecutionContext, name: string, mcpTools: Map<string, McpTool>): boolean {
    const mcp = mcpTools.get(name);
    return mcp ? mcp.approvalPolicy === 'require_approval' : this.approvals.toolRequiresApproval(name, ctx.task.approvalPolicies);
  }

  /** The task's own cap (a saved agent's `max_turns`), else GATEWAY_TASK_AGENT_LOOP_MAX_TURNS. */
  private maxTurns(ctx: ExecutionContext): number {
    return ctx.task.maxTurns || this.config.agent.maxTurns;
  }

  /**
   * Guidance for the running agent (docs/design.md §11.5), taken right before a model call: in one lease-checked transaction the
   * items are consumed (with their receipt), appended to the conversation as `role=user` messages and checkpointed; the
   * run's live stream then carries each as a `message` frame and a `guidance.consumed` receipt.
   */
  private async takeGuidance(ctx: ExecutionContext, conv: Conversation): Promise<void> {
    if (!(await this.guidanceWaiting(ctx))) return;
    const modelCallIndex = conv.model_calls + 1;
    let taken: ConsumedGuidance[] = [];
    let next: Conversation | undefined;
    await ctx.writer.tx(async (tx) => {
      taken = await this.guidance.consumeIn(tx.manager, { tenantId: ctx.run.tenantId, runId: ctx.run.id, modelCallIndex });
      if (taken.length === 0) return;
      // A step index of its own keeps the checkpoints' order (`seq`) strict.
      next = { ...conv, messages: [...conv.messages, ...taken.map((g) => ({ role: 'user' as const, content: g.content }))], next_step: conv.next_step + 1 };
      await ctx.writer.addArtifactIn(tx, checkpointArtifact(next));
      await ctx.writer.emitManyIn(
        tx,
        taken.map((g) => ({ type: 'guidance.consumed', data: { guidance_id: g.guidance_id, model_call_index: modelCallIndex, message_id: g.message_id } })),
      );
    });
    if (!next) return;
    replaceState(conv, next);
    for (const g of taken) {
      const receipt = { guidance_id: g.guidance_id, turn_id: g.turn_id, run_id: ctx.run.id, model_call_index: modelCallIndex, message_id: g.message_id };
      await this.live
        .append(
          ctx.run.id,
          JSON.stringify({ type: 'message', id: g.message_id, role: 'user', content: g.content, metadata: { ...g.metadata, guidance_id: g.guidance_id } }),
        )
        .then(() => this.live.append(ctx.run.id, JSON.stringify({ type: 'guidance.consumed', ...receipt })))
        .catch((err: unknown) => rootLogger().warn({ err: String(err), run_id: ctx.run.id }, 'guidance frames not appended to the live stream'));
    }
  }

  /**
   * The conversation to continue: this run's checkpoint (a run taken over, or requeued after an approval), else the
   * source run's for resume / continue / retry-from-turn (docs/api.md §4), else a fresh one.
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
        // Opened like every file tool opens a file (no symlink followed, only the head read): never a host file.
        const head = await withWorkspaceFile(ctx.workspace.path, join(await realpath(ctx.workspace.path), name), (f) => readHead(f, AGENTS_MAX_BYTES));
        if (!head) continue;
        parts.push(`${name} from the workspace:\n${head.data.toString('utf8')}`);
        break;
      } catch {
        // not there
      }
    }
    if (ctx.task.systemPrompt) parts.push(ctx.task.systemPrompt);
    return parts.join('\n\n');
  }

  /**
   * Gated calls of one response wait under one `agent_loop_tool_call` approval listing each call's exact arguments;
   * approving requeues the run, which dispatches exactly those calls (the approval's hash proves it) with no new model call.
   */
  private async gate(ctx: ExecutionContext, conv: Conversation, mcpTools: Map<string, McpTool>): Promise<ExecutionOutcome | null> {
    const gated = conv.pending!.filter((c) => this.needsApproval(ctx, c.function.name, mcpTools));
    if (gated.length === 0) return null;
    // As stored (NUL replaced), so the hash the requeued run checks is the one the approval recorded.
    const details = storableValue({ tool_calls: gated.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) });
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
}
