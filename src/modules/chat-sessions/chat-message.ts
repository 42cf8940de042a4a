import { randomBytes, randomUUID } from 'node:crypto';

/**
 * The canonical message (docs/api.md §1): an OpenAI-shaped chat message plus Hecate's `content_blocks`
 * (Anthropic-style, thinking kept with its signature) and `tool_error`. Stored as sent, so every field
 * survives a round trip through any provider.
 */
export interface ChatMessageJson {
  role: string;
  content?: unknown;
  content_blocks?: Array<Record<string, unknown>>;
  tool_calls?: ToolCallJson[];
  tool_call_id?: string;
  tool_error?: boolean;
  name?: string;
  [extra: string]: unknown;
}

export interface ToolCallJson {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * complete: a finished message. in_progress: being generated. incomplete: cut short (client disconnect,
 * crashed owner). stopped: cut short by POST …/stop. failed: the upstream failed (excluded from replay).
 */
export type MessageStatus = 'complete' | 'in_progress' | 'incomplete' | 'stopped' | 'failed';
export type MessageKind = 'message' | 'compaction_summary';

export const isReplayable = (status: MessageStatus): boolean => status !== 'failed';

const compactUuid = () => randomUUID().replace(/-/g, '');
export const newSessionId = () => `chat_${compactUuid()}`;
export const newMessageId = () => `msg_${compactUuid()}`;

let lastCallMs = 0;
let callSeq = 0;
/**
 * Provider call ids sort in creation order within a process: a session lists its calls by (created_at, id),
 * and two calls recorded in the same millisecond would otherwise come back in random order. 32 hex digits:
 * 12 of milliseconds, 4 of a per-millisecond counter, 16 random.
 */
export const newCallId = (): string => {
  const now = Date.now();
  if (now > lastCallMs) {
    lastCallMs = now;
    callSeq = 0;
  } else if (++callSeq > 0xffff) {
    lastCallMs += 1; // more than 65,536 in one millisecond (or the clock went back): borrow the next one
    callSeq = 0;
  }
  return `call_${lastCallMs.toString(16).padStart(12, '0')}${callSeq.toString(16).padStart(4, '0')}${randomBytes(8).toString('hex')}`;
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keeps a client-supplied message as it is (only a non-object becomes an empty user message). */
export function canonicalClientMessage(raw: unknown): ChatMessageJson {
  if (!isRecord(raw) || typeof raw.role !== 'string') return { role: 'user', content: '' };
  return { ...raw, role: raw.role } as ChatMessageJson;
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/** The parts of a generated reply the store keeps. */
export interface GeneratedReply {
  text: string;
  content_blocks: Array<Record<string, unknown>>;
  tool_calls: ToolCallJson[];
}

/** An assistant message from a generated reply; tool-call arguments that are not JSON (cut mid-stream) become `{}`. */
export function assistantMessage(reply: GeneratedReply, opts: { repairArguments?: boolean } = {}): ChatMessageJson {
  const calls = reply.tool_calls.map((c) =>
    opts.repairArguments && !isJson(c.function.arguments) ? { ...c, function: { ...c.function, arguments: '{}' } } : c,
  );
  const message: ChatMessageJson = { role: 'assistant', content: reply.text === '' && calls.length > 0 ? null : reply.text };
  const blocks = opts.repairArguments
    ? reply.content_blocks.map((b) => (b.type === 'tool_use' && isRecord(b.input) && '_raw' in b.input ? { ...b, input: {} } : b))
    : reply.content_blocks;
  if (blocks.length > 0) message.content_blocks = blocks;
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** Appends a continuation to a partial assistant message (continue in place). */
export function extendAssistantMessage(partial: ChatMessageJson, more: GeneratedReply): ChatMessageJson {
  const text = `${textOf(partial.content)}${more.text}`;
  const blocks = [...(partial.content_blocks ?? [])];
  for (const b of more.content_blocks) {
    const last = blocks[blocks.length - 1];
    if (b.type === 'text' && last?.type === 'text') blocks[blocks.length - 1] = { ...last, text: `${String(last.text ?? '')}${String(b.text ?? '')}` };
    else blocks.push(b);
  }
  const out: ChatMessageJson = { ...partial, content: text };
  if (blocks.length > 0) out.content_blocks = blocks;
  const calls = [...(partial.tool_calls ?? []), ...more.tool_calls];
  if (calls.length > 0) out.tool_calls = calls;
  return out;
}

/** The result that closes a tool call which never ran, so the transcript still replays. */
export const syntheticToolError = (toolCallId: string, reason: string): ChatMessageJson => ({
  role: 'tool',
  tool_call_id: toolCallId,
  content: `The tool call was not executed: ${reason}.`,
  tool_error: true,
});

/** Tool calls of `message` that no later message on the path answers. */
export function openToolCalls(message: ChatMessageJson, later: ChatMessageJson[]): string[] {
  const answered = new Set(later.filter((m) => m.role === 'tool' && typeof m.tool_call_id === 'string').map((m) => m.tool_call_id));
  return (message.tool_calls ?? []).map((c) => c.id).filter((id) => !answered.has(id));
}

/** The session system prompt goes first unless the conversation already starts with a system message. */
export function withSystemPrompt(messages: ChatMessageJson[], systemPrompt: string): ChatMessageJson[] {
  if (!systemPrompt || messages[0]?.role === 'system') return messages;
  return [{ role: 'system', content: systemPrompt }, ...messages];
}

/** Size of a message in the context estimate. */
export const charsOf = (m: ChatMessageJson): number => JSON.stringify(m).length;

const toolCallIds = (m: ChatMessageJson) => (m.tool_calls ?? []).map((c) => c.id).join(',');
const sameMessage = (a: ChatMessageJson, b: ChatMessageJson) =>
  a.role === b.role && textOf(a.content) === textOf(b.content) && toolCallIds(a) === toolCallIds(b) && (a.tool_call_id ?? '') === (b.tool_call_id ?? '');

/**
 * The messages of this request the session does not have yet. The API contract's rule — everything after the
 * persisted count — applies when the request replays the stored path (its message at that position is the
 * stored leaf). When it does not (the session was compacted, or the client sends only its new turn), the
 * new messages are those after the last copy of the stored leaf, else the trailing user/tool messages.
 */
export function newClientMessages(body: ChatMessageJson[], persisted: number, leaf: ChatMessageJson | null): ChatMessageJson[] {
  if (!leaf || persisted === 0) return body;
  if (body.length > persisted && sameMessage(body[persisted - 1], leaf)) return body.slice(persisted);
  for (let j = body.length - 1; j >= 0; j--) if (sameMessage(body[j], leaf)) return body.slice(j + 1);
  let k = body.length;
  while (k > 0 && body[k - 1].role !== 'assistant') k--;
  return body.slice(k);
}
