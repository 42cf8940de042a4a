import type { NewArtifact, StepSpec } from '@modules/tasks';
import type { InferenceMessage } from '@modules/inference';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The `agent_conversation` artifact: the messages so far and where the loop stands. */
export interface Conversation {
  messages: InferenceMessage[];
  /** The step index the next model or tool call gets. */
  next_step: number;
  /** Model calls made by this run. */
  model_calls: number;
  /** Tool calls of the last assistant message not answered yet. */
  pending?: ToolCall[];
  /** This run's model spend so far, micro-USD (the chain's earlier runs are the run's prior_cost_micros_usd). */
  run_cost: number;
  /** The final answer, once the model gave one (the run then ends). */
  final?: string;
  /**
   * The index on this run's live stream of the last frame the latest model call appended: a model call made again after
   * a takeover puts a `reset` from the index after it on the stream (docs/takeover.md).
   */
  live_index?: number;
  /** Messages this run's checkpoints already hold (not saved: the next checkpoint stores only the ones after). */
  checkpointed?: number;
}

/**
 * A checkpoint as stored: the messages appended since the run's previous checkpoint (all of them in its first), and the
 * loop's state. What the last assistant message already holds is not repeated: `pending` as how many of its tool calls
 * are still to run, `final` as a flag. TaskArtifactRepository composes the whole conversation when it is read.
 */
interface StoredCheckpoint extends Omit<Conversation, 'pending' | 'final' | 'checkpointed'> {
  pending?: ToolCall[];
  pending_last?: number;
  final?: string;
  final_last?: true;
}

const lastAssistant = (messages: InferenceMessage[]) => [...messages].reverse().find((m) => m.role === 'assistant');

/** Parses a saved conversation (as the artifacts answer it: whole); null when it is missing or malformed. */
export function parseConversation(text: string | null): Conversation | null {
  if (!text) return null;
  try {
    const { pending_last: pendingLast, final_last: finalLast, ...c } = JSON.parse(text) as StoredCheckpoint;
    if (!Array.isArray(c.messages) || c.messages.length === 0) return null;
    const last = lastAssistant(c.messages);
    const conv: Conversation = { ...c, checkpointed: c.messages.length };
    if (pendingLast) conv.pending = ((last?.tool_calls ?? []) as ToolCall[]).slice(-pendingLast);
    if (finalLast) conv.final = typeof last?.content === 'string' ? last.content : '';
    return conv;
  } catch {
    return null;
  }
}

/** Assistant messages of a conversation (the turns `retry-from-turn` counts). */
export const assistantTurns = (c: Conversation): number => c.messages.filter((m) => m.role === 'assistant').length;

/**
 * The history a new run of the chain starts from (docs/api.md §4): `resume` keeps it as saved (pending calls are gated and
 * dispatched again); `continue` answers any unanswered call as not run and appends the new prompt; `retry-from-turn N`
 * cuts it right before the Nth assistant message, so the model issues that turn again.
 */
export function startingHistory(source: Conversation, input: { continue_prompt?: string; retry_from_turn?: number } | undefined): Conversation {
  const base = { next_step: 0, model_calls: 0, run_cost: 0 };
  if (input?.retry_from_turn) {
    let seen = 0;
    const cut = source.messages.findIndex((m) => m.role === 'assistant' && ++seen === input.retry_from_turn);
    return { ...base, messages: source.messages.slice(0, cut < 0 ? source.messages.length : cut) };
  }
  if (input?.continue_prompt !== undefined) {
    const messages = [...source.messages];
    for (const call of source.pending ?? []) {
      messages.push({ role: 'tool', tool_call_id: call.id, content: 'not run: the run ended before this call was made', tool_error: true });
    }
    messages.push({ role: 'user', content: input.continue_prompt });
    return { ...base, messages };
  }
  return { ...base, messages: source.messages, pending: source.pending };
}

/**
 * The checkpoint of a conversation, written in the same transaction as the step that produced it: only the messages
 * after the run's previous checkpoint (`appends`), so a run stores each message once. Marks them as checkpointed.
 */
export function checkpointArtifact(conv: Conversation): NewArtifact {
  const { checkpointed = 0, pending, final, ...state } = conv;
  const base = checkpointed <= conv.messages.length ? checkpointed : 0;
  const stored: StoredCheckpoint = { ...state, messages: conv.messages.slice(base) };
  const last = lastAssistant(conv.messages);
  const calls = (last?.tool_calls ?? []) as ToolCall[];
  if (pending?.length) {
    const suffix = calls.slice(-pending.length);
    if (suffix.length === pending.length && suffix.every((c, i) => c.id === pending[i].id)) stored.pending_last = pending.length;
    else stored.pending = pending;
  }
  if (final !== undefined) {
    if (last?.content === final && conv.messages.at(-1) === last) stored.final_last = true;
    else stored.final = final;
  }
  conv.checkpointed = conv.messages.length;
  // `seq` orders a run's checkpoints (two can share a millisecond): the newest is the one with the highest next step.
  return {
    kind: 'agent_conversation',
    name: 'agent_conversation',
    mimeType: 'application/json',
    content: JSON.stringify(stored),
    metadata: { seq: conv.next_step, appends: 'messages', base },
  };
}

/** Moves the loop's state forward in place. */
export function replaceState(conv: Conversation, next: Conversation): void {
  for (const key of Object.keys(conv) as (keyof Conversation)[]) delete conv[key];
  Object.assign(conv, next);
}

/** The step that follows from a state of the loop when nothing can come between (no approval, no guidance), or none. */
export type NextStep = (after: Conversation) => StepSpec | undefined | Promise<StepSpec | undefined>;

/** Events and step records carry at most this much of a model's text or arguments; the conversation holds all of it. */
export const PREVIEW_BYTES = 4096;

/** A large text as events show it: its start, and its size when it was cut (stored once, in the conversation). */
export function preview(text: string, max = PREVIEW_BYTES): { text: string; truncated?: true; bytes?: number } {
  if (text.length <= max / 4 || Buffer.byteLength(text) <= max) return { text };
  return {
    text: Buffer.from(text)
      .subarray(0, max)
      .toString('utf8')
      .replace(/\uFFFD$/, ''),
    truncated: true,
    bytes: Buffer.byteLength(text),
  };
}
