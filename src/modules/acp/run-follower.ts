import type { Logger } from 'pino';
import { within } from '@core/async/within';
import type { Acp } from './acp-sdk';
import { callOptions, type HecateClient, isApiStatus, type RunOutcome, type RunStreamEvent, type TaskApproval, type TaskRun } from './hecate-client';
import { parseArguments, stepOutput, textContent, toolKind, toolLocations, toolTitle } from './tool-calls';

/** What the follower needs of the editor: updates out, permission questions answered. */
export interface EditorChannel {
  update(update: Acp.SessionUpdate): Promise<void>;
  requestPermission(toolCall: Acp.ToolCallUpdate, options: Acp.PermissionOption[], signal: AbortSignal): Promise<Acp.RequestPermissionOutcome>;
}

/** How a followed run ended, for the prompt's stop reason. */
export interface RunEnd {
  run: RunOutcome;
  /** `stop_reason` of the run's last model call (`refusal`, `max_tokens`, …). */
  modelStopReason?: string;
  /** The editor rejected a gated call, which ends the run (a rejected approval cancels it). */
  rejected: boolean;
}

const ALLOW = 'allow_once';
const REJECT = 'reject_once';
/**
 * Task approvals have no standing grant to map `allow_always` to: each gated call is asked about once. Approving
 * dispatches exactly the calls the approval lists (docs/design.md §11: approvals bind to the exact call).
 */
const PERMISSION_OPTIONS: Acp.PermissionOption[] = [
  { optionId: ALLOW, name: 'Allow', kind: 'allow_once' },
  { optionId: REJECT, name: 'Reject', kind: 'reject_once' },
];
const TOOL_END_EVENTS = new Set(['tool.completed', 'tool.failed', 'tool.cancelled', 'tool.timed_out']);
/**
 * The live stream ends with the run; a completed run's last deltas may trail its terminal event by a moment. A cancelled
 * run's stream may take a poll period to notice the end, and its text no longer matters: the editor gets its answer now.
 */
const LIVE_DRAIN_MS = 5_000;
const LIVE_DRAIN_CANCELLED_MS = 200;
const OUTPUT_TAIL = 64 * 1024;

interface CallState {
  id: string;
  name: string;
  args: Record<string, unknown>;
  announced: boolean;
  status: Acp.ToolCallStatus;
  /** A running tool's output so far (`tool_progress` on the live stream). */
  output: string;
}

/**
 * Follows one Hecate run for the editor (its run stream and live stream): model text as `agent_message_chunk`,
 * reasoning as `agent_thought_chunk`, each tool call as `tool_call` / `tool_call_update`, and every pending
 * `agent_loop_tool_call` approval as `session/request_permission`, whose answer resolves the approval.
 */
export class RunFollower {
  private readonly calls = new Map<string, CallState>();
  private readonly stepCalls = new Map<string, string>();
  private readonly asked = new Set<string>();
  private modelStopReason: string | undefined;
  private rejected = false;

  constructor(
    private readonly api: HecateClient,
    private readonly editor: EditorChannel,
    private readonly ref: { taskId: string; runId: string },
    private readonly cwd: string,
    /** Aborted when the editor cancels the prompt: a pending permission question is withdrawn. */
    private readonly cancelled: AbortSignal,
    /** The editor answered a permission question with `cancelled`: the prompt is being cancelled. */
    private readonly onEditorCancel: () => void,
    private readonly log: Logger,
  ) {}

  async follow(): Promise<RunEnd> {
    const stop = new AbortController();
    const live = this.followLive(stop.signal).catch((err: unknown) => this.log.warn({ err: String(err), run_id: this.ref.runId }, 'live stream ended early'));
    let last: RunStreamEvent | undefined;
    try {
      for await (const { data: frame } of this.api.streams.run(this.ref.taskId, this.ref.runId, { signal: stop.signal })) {
        last = frame;
        await this.onFrame(frame);
        if (frame.terminal) break;
      }
      await within(live, last?.run.status === 'cancelled' ? LIVE_DRAIN_CANCELLED_MS : LIVE_DRAIN_MS);
    } finally {
      stop.abort();
    }
    const run = last?.terminal ? last.run : await this.currentRun();
    await this.closeOpenCalls(run.status);
    return { run, modelStopReason: this.modelStopReason, rejected: this.rejected };
  }

  private async currentRun(): Promise<TaskRun> {
    const path = { task_id: this.ref.taskId, run_id: this.ref.runId };
    return (await this.api.get('/hecate/v1/tasks/{task_id}/runs/{run_id}', { path, ...callOptions() })).data;
  }

  private async onFrame(frame: RunStreamEvent): Promise<void> {
    if (frame.event) await this.onEvent(frame.event, frame);
    for (const approval of frame.approvals ?? []) {
      if (approval.status !== 'pending' || approval.kind !== 'agent_loop_tool_call' || this.asked.has(approval.id)) continue;
      this.asked.add(approval.id);
      await this.askEditor(approval);
    }
  }

  private async onEvent(e: NonNullable<RunStreamEvent['event']>, frame: RunStreamEvent): Promise<void> {
    const d = e.data;
    if (e.type === 'model.call.completed') {
      this.modelStopReason = typeof d.stop_reason === 'string' ? d.stop_reason : undefined;
    } else if (e.type === 'assistant.tool_call_proposed') {
      await this.announce(this.callOf(String(d.tool_call_id), String(d.tool_name), d.arguments));
    } else if (e.type === 'tool.invoked' && d.kind === 'tool') {
      const input = (d.input ?? {}) as { tool_call_id?: string; arguments?: unknown };
      if (!input.tool_call_id) return;
      this.stepCalls.set(String(d.step_id), input.tool_call_id);
      const call = this.callOf(input.tool_call_id, String(d.tool_name), input.arguments);
      await this.announce(call);
      await this.setStatus(call, 'in_progress', call.output ? { content: textContent(call.output) } : {});
    } else if (TOOL_END_EVENTS.has(e.type) && d.kind === 'tool') {
      const call = this.calls.get(this.stepCalls.get(String(d.step_id)) ?? '');
      if (!call) return;
      const out = stepOutput(
        frame.steps?.find((s) => s.id === d.step_id),
        typeof d.error === 'string' ? d.error : e.type,
      );
      const ok = e.type === 'tool.completed' && !out.isError;
      await this.setStatus(call, ok ? 'completed' : 'failed', {
        content: textContent(out.text),
        rawOutput: { text: out.text, is_error: out.isError, ...(out.exitCode !== undefined ? { exit_code: out.exitCode } : {}) },
      });
    }
  }

  /** One question per gated call of the approval; the first rejection rejects it, all allowed approve it. */
  private async askEditor(approval: TaskApproval): Promise<void> {
    const gated = Array.isArray(approval.details.tool_calls) ? (approval.details.tool_calls as Array<{ id: string; name: string; arguments: unknown }>) : [];
    let decision: 'approve' | 'reject' = 'approve';
    for (const c of gated) {
      const call = this.callOf(c.id, c.name, c.arguments);
      await this.announce(call);
      const outcome = await this.editor.requestPermission(this.fields(call), PERMISSION_OPTIONS, this.cancelled);
      if (outcome.outcome === 'cancelled') {
        // The run stays paused until the prompt's cancel cancels it (which cancels the approval too).
        if (!this.cancelled.aborted) this.onEditorCancel();
        return;
      }
      if (outcome.optionId !== ALLOW) {
        decision = 'reject';
        break;
      }
    }
    try {
      await this.api.post('/hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve', {
        path: { task_id: this.ref.taskId, approval_id: approval.id },
        body: { decision, note: decision === 'approve' ? 'allowed in the editor (ACP)' : 'rejected in the editor (ACP)' },
        ...callOptions(),
      });
    } catch (err) {
      // No longer pending (the run was cancelled meanwhile): nothing to decide.
      if (isApiStatus(err, 409)) return;
      throw err;
    }
    if (decision === 'reject') {
      this.rejected = true;
      for (const c of gated)
        await this.setStatus(this.callOf(c.id, c.name, c.arguments), 'failed', { content: textContent('rejected in the editor: not run') });
    }
  }

  private async followLive(signal: AbortSignal): Promise<void> {
    for await (const f of this.api.streams.live(this.ref.taskId, this.ref.runId, { signal })) {
      if (f.event === 'done') return;
      if (f.event === 'delta') {
        // Model deltas only: `message` (guidance taken by the loop) and receipt frames carry a `type`.
        const { content, reasoning, type } = f.data;
        if (type !== undefined) continue;
        if (content) await this.editor.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: content } });
        if (reasoning) await this.editor.update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: reasoning } });
        continue;
      }
      if (f.event !== 'tool_progress') continue;
      const call = this.calls.get(f.data.tool_call_id);
      if (!call || !f.data.text) continue;
      call.output = (call.output + f.data.text).slice(-OUTPUT_TAIL);
      if (call.announced && call.status === 'in_progress') await this.update(call, { content: textContent(call.output) });
    }
  }

  private callOf(id: string, name: string, args: unknown): CallState {
    let call = this.calls.get(id);
    if (!call) {
      call = { id, name, args: parseArguments(args), announced: false, status: 'pending', output: '' };
      this.calls.set(id, call);
    }
    return call;
  }

  private fields(call: CallState): Acp.ToolCallUpdate & Acp.ToolCall {
    return {
      toolCallId: call.id,
      title: toolTitle(call.name, call.args),
      kind: toolKind(call.name),
      status: call.status,
      rawInput: call.args,
      locations: toolLocations(call.args, this.cwd),
    };
  }

  private async announce(call: CallState): Promise<void> {
    if (call.announced) return;
    call.announced = true;
    await this.editor.update({ sessionUpdate: 'tool_call', ...this.fields(call) });
  }

  private async setStatus(call: CallState, status: Acp.ToolCallStatus, extra: Partial<Acp.ToolCallUpdate>): Promise<void> {
    if (call.status === 'completed' || call.status === 'failed') return;
    call.status = status;
    await this.update(call, { status, ...extra });
  }

  private update(call: CallState, fields: Partial<Acp.ToolCallUpdate>): Promise<void> {
    return this.editor.update({ sessionUpdate: 'tool_call_update', toolCallId: call.id, ...fields });
  }

  /** Calls the run never finished (cancelled, failed, rejected) end as failed, so no editor card spins forever. */
  private async closeOpenCalls(runStatus: string): Promise<void> {
    for (const call of this.calls.values()) {
      if (call.announced) await this.setStatus(call, 'failed', { content: textContent(call.output || `not run: the run ended (${runStatus})`) });
    }
  }
}
