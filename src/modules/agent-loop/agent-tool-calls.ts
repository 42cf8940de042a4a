import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { MetricsService } from '@core/metrics/metrics.service';
import { ignoreFailure } from '@core/logging/ignore-failure';
import type { McpTool, McpToolSet } from '@modules/mcp';
import type { ExecutionContext, StepOutcome, StepSpec } from '@modules/tasks';
import { COMMAND_SANDBOX, type CommandSandbox, WorkspaceGit } from '@modules/workspaces';
import { BUILTIN_BY_NAME, type BuiltinTool, ToolInputError, type ToolResult } from './builtin-tools';
import { checkpointArtifact, type Conversation, type NextStep, PREVIEW_BYTES, replaceState } from './conversation';

const progressLost = ignoreFailure('appending tool progress', 'progress frames are advisory; the call and its result are recorded in the conversation');

const TOOL_RESULT_MAX_CHARS = 64 * 1024;

/** The run's MCP tools, by the alias the model calls them. */
export interface McpCalls {
  mcp: McpToolSet | null;
  mcpTools: Map<string, McpTool>;
  /** Built-in tools the run offers (a saved agent's `builtin_tools`); null: all. A call to another is an unknown tool. */
  builtins: ReadonlySet<string> | null;
}

/**
 * The agent loop's tool calls (docs/design.md §11.6): one step each, built-in tools in the sandbox or MCP tools through the
 * pool, their output as tool_progress on the run's live stream.
 */
@Injectable()
export class AgentToolCalls {
  constructor(
    @Inject(COMMAND_SANDBOX) private readonly sandbox: CommandSandbox,
    private readonly config: AppConfig,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
    private readonly metrics: MetricsService,
  ) {}

  /** Git in a run's workspace, under the worker's command sandbox (the runner's base tree and final diff). */
  workspaceGit(workspace: string, signal: AbortSignal): WorkspaceGit {
    return new WorkspaceGit(this.sandbox, this.config.tasks, workspace, signal);
  }

  /**
   * `tool_progress` frames of one tool call on the run's live stream (docs/api.md §5): appended in order, never in the
   * conversation; `closed: true` ends them (a call that streamed nothing — a file read — has no frames to end, and
   * costs the stream nothing). A buffer outage loses progress, never the call.
   */
  private progressOf(runId: string, toolCallId: string): { push(stream: 'stdout' | 'stderr', text: string): void; close(): Promise<void> } {
    let chain: Promise<unknown> | undefined;
    const append = (frame: Record<string, unknown>) => {
      chain = (chain ?? Promise.resolve()).then(() => this.live.append(runId, JSON.stringify(frame))).catch(progressLost);
    };
    return {
      push: (stream, text) => {
        if (text) append({ type: 'tool_progress', tool_call_id: toolCallId, text, stream, closed: false, ts: Date.now() / 1000 });
      },
      close: async () => {
        if (!chain) return;
        append({ type: 'tool_progress', tool_call_id: toolCallId, text: '', stream: 'stdout', closed: true, ts: Date.now() / 1000 });
        await chain;
      },
    };
  }

  /** The first pending tool call of `conv`, resolved, and its step. */
  private resolve(conv: Conversation, calls: McpCalls) {
    const call = conv.pending![0];
    const mcpTool = calls.mcpTools.get(call.function.name);
    const offered = !calls.builtins || calls.builtins.has(call.function.name);
    const tool = mcpTool ? mcpToolAsBuiltin(mcpTool, calls.mcp!) : offered ? BUILTIN_BY_NAME.get(call.function.name) : undefined;
    let args: Record<string, unknown> = {};
    let inputError = '';
    try {
      const parsed: unknown = JSON.parse(call.function.arguments || '{}');
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
      else inputError = 'arguments must be a JSON object';
    } catch {
      inputError = 'arguments are not valid JSON';
    }
    const spec: StepSpec = {
      index: conv.next_step,
      kind: 'tool',
      title: call.function.name,
      toolName: call.function.name,
      // Large arguments are kept once, in the conversation; the step records their size.
      input: {
        tool_call_id: call.id,
        ...(call.function.arguments.length <= PREVIEW_BYTES ? { arguments: args } : { arguments_bytes: Buffer.byteLength(call.function.arguments) }),
        classification: tool?.classification ?? 'unknown',
      },
      idempotent: tool ? tool.classification !== 'side_effecting' : true,
    };
    return { call, mcpTool, tool, args, inputError, spec };
  }

  /** The first pending tool call of `conv` as a step. */
  spec(conv: Conversation, calls: McpCalls): StepSpec {
    return this.resolve(conv, calls).spec;
  }

  /**
   * The first pending tool call as a step; its result and the new checkpoint commit together (with the dispatch
   * record of the step `plan` names next, if any). A completed call is never run again; a side-effecting one cut off
   * by a crash is answered as "outcome unknown".
   */
  async dispatch(ctx: ExecutionContext, conv: Conversation, calls: McpCalls, plan: NextStep): Promise<void> {
    const { call, mcpTool, tool, args, inputError, spec } = this.resolve(conv, calls);
    const rest = conv.pending!.slice(1);
    const index = conv.next_step;
    const after = (content: string, isError: boolean): Conversation => ({
      ...conv,
      messages: [...conv.messages, { role: 'tool', tool_call_id: call.id, content, ...(isError ? { tool_error: true } : {}) }],
      next_step: index + 1,
      pending: rest.length ? rest : undefined,
    });
    let next: Conversation | undefined;
    // The metric's labels: MCP tools as `mcp` (their names are the servers'), unknown names as `unknown`.
    const toolLabel = mcpTool ? 'mcp' : tool ? tool.name : 'unknown';
    let callOutcome = 'ok';
    const { outcome, replayed } = await ctx.writer.step(spec, async (): Promise<StepOutcome> => {
      if (mcpTool?.approvalPolicy === 'block') {
        callOutcome = 'blocked';
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
          artifacts: [checkpointArtifact(next)],
          next: await plan(next),
        };
      }
      const result = await this.run(ctx, call.id, tool, args, inputError, call.function.name);
      const text = result.text.length > TOOL_RESULT_MAX_CHARS ? `${result.text.slice(0, TOOL_RESULT_MAX_CHARS)}\n[truncated]` : result.text;
      callOutcome = !tool ? 'unknown_tool' : inputError ? 'invalid_arguments' : result.isError ? 'error' : 'ok';
      next = after(text, result.isError);
      return {
        status: result.isError ? 'failed' : 'completed',
        result: JSON.stringify({ text, is_error: result.isError }),
        exitCode: result.exitCode,
        outputSummary: result.summary ?? {},
        error: result.isError ? text.slice(0, 500) : undefined,
        errorKind: result.isError ? 'tool_error' : undefined,
        eventData: mcpTool ? { mcp_server: mcpTool.server, mcp_tool: mcpTool.name, result: result.isError ? 'tool_error' : 'dispatched' } : undefined,
        artifacts: [...(result.artifacts ?? []), checkpointArtifact(next)],
        next: await plan(next),
      };
    });
    // A call an earlier attempt completed was counted then; one cut off by a crash is counted once, as outcome unknown.
    if (!replayed) this.metrics.agentToolCalled(toolLabel, callOutcome);
    else if (outcome.errorKind === 'ambiguous_side_effect') this.metrics.agentToolCalled(toolLabel, 'outcome_unknown');
    if (replayed || !next) {
      const { content, isError } = recordedResult(outcome);
      next = after(content, isError);
      await ctx.writer.addArtifact(checkpointArtifact(next));
    }
    replaceState(conv, next);
  }

  /** Runs one built-in (or MCP) tool call; an unknown tool, invalid arguments or a thrown error is the model's tool error. */
  private async run(
    ctx: ExecutionContext,
    callId: string,
    tool: BuiltinTool | undefined,
    args: Record<string, unknown>,
    inputError: string | undefined,
    name: string,
  ): Promise<ToolResult> {
    if (!tool) return { text: `unknown tool ${name}`, isError: true };
    if (inputError) return { text: inputError, isError: true };
    try {
      const progress = this.config.agent.toolProgress ? this.progressOf(ctx.run.id, callId) : undefined;
      try {
        return await tool.run(args, {
          workspace: ctx.workspace,
          sandbox: this.sandbox,
          config: this.config,
          signal: ctx.signal,
          timeoutMs: ctx.task.timeoutMs || ctx.config.defaultTimeoutMs,
          progress: progress?.push,
        });
      } finally {
        await progress?.close();
      }
    } catch (err) {
      return { text: err instanceof ToolInputError ? `invalid arguments: ${err.message}` : (err as Error).message, isError: true };
    }
  }
}

/** The tool message an earlier attempt recorded for this call; a side-effecting call cut off by a crash is "outcome unknown". */
function recordedResult(outcome: { status: string; result?: string | null; error?: string | null; errorKind?: string | null }): {
  content: string;
  isError: boolean;
} {
  if (outcome.errorKind === 'ambiguous_side_effect') {
    return { content: 'outcome unknown after a restart: the worker running this tool call was lost; it was not run again', isError: true };
  }
  try {
    const r = JSON.parse(outcome.result ?? '') as { text: string; is_error: boolean };
    return { content: r.text, isError: r.is_error };
  } catch {
    return { content: outcome.error || outcome.status, isError: outcome.status !== 'completed' };
  }
}

/** An MCP tool in the loop's tool shape: classified by its annotations (docs/design.md §11.6), called through the pool. */
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
