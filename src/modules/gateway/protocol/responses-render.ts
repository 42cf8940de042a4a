import { InferenceDelta, Json, NormalizedMessage, NormalizedUsage, StopReason } from '@modules/inference';
import { DeltaBookkeeping } from './stream-encoders';
import { itemId } from './responses-request';

/** Rendering a completion as an OpenAI Responses API response object, whole or as its typed stream events. */

const enc = JSON.stringify;

export function toResponsesUsage(u: NormalizedUsage): Json {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens ?? 0 },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

/** What a response object says besides its output: its id, the routed model, the request's echoed parameters. */
export interface ResponseHead {
  id: string;
  createdAt: number;
  model: string;
  params: Json;
  previousResponseId: string | undefined;
  store: boolean;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export function responseObject(
  head: ResponseHead,
  status: ResponseStatus,
  output: Json[],
  usage: NormalizedUsage | null,
  extra: { error?: Json; incompleteReason?: string } = {},
): Json {
  const p = head.params;
  return {
    id: head.id,
    object: 'response',
    created_at: head.createdAt,
    status,
    background: false,
    error: extra.error ?? null,
    incomplete_details: extra.incompleteReason ? { reason: extra.incompleteReason } : null,
    instructions: p.instructions ?? null,
    max_output_tokens: p.max_output_tokens ?? null,
    max_tool_calls: null,
    model: head.model,
    output,
    parallel_tool_calls: p.parallel_tool_calls ?? true,
    previous_response_id: head.previousResponseId ?? null,
    reasoning: p.reasoning ?? { effort: null, summary: null },
    service_tier: 'default',
    store: head.store,
    temperature: p.temperature ?? 1,
    text: p.text ?? { format: { type: 'text' } },
    tool_choice: p.tool_choice ?? 'auto',
    tools: p.tools ?? [],
    top_p: p.top_p ?? 1,
    truncation: 'disabled',
    usage: usage ? toResponsesUsage(usage) : null,
    user: p.user ?? null,
    metadata: p.metadata ?? {},
  };
}

const statusOf = (stop: StopReason | null | undefined): { status: ResponseStatus; incompleteReason?: string } =>
  stop === 'max_tokens' || stop === 'model_context_window_exceeded'
    ? { status: 'incomplete', incompleteReason: 'max_output_tokens' }
    : stop === 'refusal'
      ? { status: 'incomplete', incompleteReason: 'content_filter' }
      : { status: 'completed' };

const messageItem = (id: string, text: string, status: string): Json => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

const reasoningItem = (id: string, text: string, signature?: string): Json => {
  const item: Json = { id, type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text }] };
  if (signature) item.encrypted_content = signature;
  return item;
};

/** A finished (non-streamed) completion as a response object. */
export function renderResponse(head: ResponseHead, n: NormalizedMessage): Json {
  const output: Json[] = [];
  for (const b of n.content_blocks) {
    if (b.type === 'thinking') output.push(reasoningItem(itemId('rs'), String(b.thinking ?? ''), String(b.signature ?? '') || undefined));
  }
  if (n.text !== '' || n.tool_calls.length === 0) output.push(messageItem(itemId('msg'), n.text, 'completed'));
  for (const tc of n.tool_calls) {
    output.push({ id: itemId('fc'), type: 'function_call', status: 'completed', call_id: tc.id, name: tc.function.name, arguments: tc.function.arguments });
  }
  const s = statusOf(n.stop_reason);
  return responseObject(head, s.status, output, n.usage, { incompleteReason: s.incompleteReason });
}

type Open = { kind: 'message' | 'reasoning' | 'function_call'; index: number; id: string; text: string; tool?: number; signature?: string };

/**
 * Protocol-neutral deltas → Responses stream events (`response.created` … `response.completed`), numbered by
 * `sequence_number`. The finished response (output items, usage) is kept for storage.
 */
export class ResponsesEventEncoder extends DeltaBookkeeping {
  private seq = 0;
  private started = false;
  private open: Open | undefined;
  private readonly output: Json[] = [];
  private readonly calls = new Map<number, Open>();
  private finalResponse: Json | undefined;

  constructor(private readonly head: ResponseHead) {
    super();
  }

  private ev(type: string, data: Json): string {
    return `event: ${type}\ndata: ${enc({ type, sequence_number: this.seq++, ...data })}\n\n`;
  }

  /** `response.created` and `response.in_progress` (once). */
  begin(): string {
    if (this.started) return '';
    this.started = true;
    const r = responseObject(this.head, 'in_progress', [], null);
    return this.ev('response.created', { response: r }) + this.ev('response.in_progress', { response: r });
  }

  private close(): string {
    const o = this.open;
    if (!o) return '';
    this.open = undefined;
    let out = '';
    let item: Json;
    if (o.kind === 'message') {
      const part = { type: 'output_text', text: o.text, annotations: [], logprobs: [] };
      out += this.ev('response.output_text.done', { item_id: o.id, output_index: o.index, content_index: 0, text: o.text, logprobs: [] });
      out += this.ev('response.content_part.done', { item_id: o.id, output_index: o.index, content_index: 0, part });
      item = messageItem(o.id, o.text, 'completed');
    } else if (o.kind === 'reasoning') {
      out += this.ev('response.reasoning_text.done', { item_id: o.id, output_index: o.index, content_index: 0, text: o.text });
      out += this.ev('response.content_part.done', { item_id: o.id, output_index: o.index, content_index: 0, part: { type: 'reasoning_text', text: o.text } });
      item = reasoningItem(o.id, o.text, o.signature);
    } else {
      const fc = this.output[o.index];
      out += this.ev('response.function_call_arguments.done', { item_id: o.id, output_index: o.index, name: fc.name, arguments: o.text });
      item = { ...fc, status: 'completed', arguments: o.text };
    }
    this.output[o.index] = item;
    return out + this.ev('response.output_item.done', { output_index: o.index, item });
  }

  private openItem(kind: Open['kind'], item: Json, tool?: number): string {
    let out = this.close();
    const o: Open = { kind, index: this.output.length, id: String(item.id), text: '', tool };
    this.open = o;
    this.output.push(item);
    out += this.ev('response.output_item.added', { output_index: o.index, item });
    if (kind === 'message') {
      out += this.ev('response.content_part.added', {
        item_id: o.id,
        output_index: o.index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      });
    } else if (kind === 'reasoning') {
      out += this.ev('response.content_part.added', { item_id: o.id, output_index: o.index, content_index: 0, part: { type: 'reasoning_text', text: '' } });
    }
    if (tool !== undefined) this.calls.set(tool, o);
    return out;
  }

  encode(d: InferenceDelta): string {
    if (this.record(d)) return '';
    let out = this.begin();
    switch (d.type) {
      case 'text_delta':
        if (this.open?.kind !== 'message')
          out += this.openItem('message', { id: itemId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] });
        this.open!.text += d.text;
        return (
          out + this.ev('response.output_text.delta', { item_id: this.open!.id, output_index: this.open!.index, content_index: 0, delta: d.text, logprobs: [] })
        );
      case 'thinking_delta':
        if (this.open?.kind !== 'reasoning') out += this.openItem('reasoning', { id: itemId('rs'), type: 'reasoning', summary: [], content: [] });
        this.open!.text += d.thinking;
        return out + this.ev('response.reasoning_text.delta', { item_id: this.open!.id, output_index: this.open!.index, content_index: 0, delta: d.thinking });
      case 'thinking_signature':
        if (this.open?.kind === 'reasoning') this.open.signature = d.signature;
        return out;
      case 'tool_call_start':
        return (
          out +
          this.openItem(
            'function_call',
            { id: itemId('fc'), type: 'function_call', status: 'in_progress', call_id: d.id, name: d.name, arguments: '' },
            d.index,
          )
        );
      case 'tool_call_delta': {
        const o = this.calls.get(d.index);
        if (!o || o !== this.open) return out;
        o.text += d.arguments;
        return out + this.ev('response.function_call_arguments.delta', { item_id: o.id, output_index: o.index, delta: d.arguments });
      }
      case 'error':
        return out + this.ev('error', { code: d.error.type, message: d.error.message, param: null });
      default:
        return out;
    }
  }

  /** Closes the open item and ends with `response.completed` (or `response.incomplete`). */
  end(): string {
    const out = this.begin() + this.close();
    const s = statusOf(this.stop);
    this.finalResponse = responseObject(this.head, s.status, this.output, this.usage, { incompleteReason: s.incompleteReason });
    return out + this.ev(s.status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.finalResponse });
  }

  /** A stream that broke: `error`, then `response.failed` with what was produced so far. */
  fail(code: string, message: string): string {
    let out = this.begin() + this.close();
    out += this.ev('error', { code, message, param: null });
    this.finalResponse = responseObject(this.head, 'failed', this.output, this.usage, { error: { code, message } });
    return out + this.ev('response.failed', { response: this.finalResponse });
  }

  /** The response as it ended (after `end` or `fail`). */
  get response(): Json | undefined {
    return this.finalResponse;
  }
}
