import { InferenceDelta, Json, NormalizedUsage, StopReason, STOP_TO_OPENAI, mergeUsage } from '@modules/inference';
import { toOpenaiUsage } from './response-render';

const enc = JSON.stringify;

/** Protocol-neutral deltas → OpenAI chunk frames (`data: {...}\n\n`, then `data: [DONE]`). */
export class OpenaiChunkEncoder {
  private readonly head: string;
  private started = false;
  private stop: StopReason | undefined;
  private thinking = '';
  readonly usage: NormalizedUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };

  constructor(
    id: string,
    model: string,
    private readonly includeUsage: boolean,
    created = Math.floor(Date.now() / 1000),
  ) {
    this.head = `{"id":${enc(id)},"object":"chat.completion.chunk","created":${created},"model":${enc(model)},"choices":[{"index":0,"delta":`;
  }

  private frame(delta: string, finish: string | null = null): string {
    return `data: ${this.head}${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : enc(finish)}}]}\n\n`;
  }

  encode(d: InferenceDelta): string {
    let out = '';
    if (!this.started && d.type !== 'usage') {
      this.started = true;
      out += this.frame('{"role":"assistant","content":""}');
    }
    switch (d.type) {
      case 'text_delta':
        return out + this.frame(`{"content":${enc(d.text)}}`);
      case 'thinking_delta':
        this.thinking += d.thinking;
        return out + this.frame(`{"reasoning_content":${enc(d.thinking)}}`);
      case 'thinking_signature': {
        const block = { type: 'thinking', thinking: this.thinking, signature: d.signature };
        this.thinking = '';
        return out + this.frame(`{"content_blocks":[${enc(block)}]}`);
      }
      case 'redacted_thinking':
        return out + this.frame(`{"content_blocks":[${enc({ type: 'redacted_thinking', data: d.data })}]}`);
      case 'tool_call_start':
        return out + this.frame(`{"tool_calls":[{"index":${d.index},"id":${enc(d.id)},"type":"function","function":{"name":${enc(d.name)},"arguments":""}}]}`);
      case 'tool_call_delta':
        return out + this.frame(`{"tool_calls":[{"index":${d.index},"function":{"arguments":${enc(d.arguments)}}}]}`);
      case 'usage':
        mergeUsage(this.usage, d.usage);
        return out;
      case 'stop':
        this.stop = d.stop_reason;
        return out;
      case 'error':
        return `${out}data: ${enc({ error: { message: d.error.message, type: d.error.type, code: d.error.type } })}\n\n`;
      default:
        return out;
    }
  }

  /** The finish chunk, the usage chunk (when asked for) and `[DONE]`. */
  end(): string {
    let out = this.started ? '' : this.frame('{"role":"assistant","content":""}');
    out += this.frame('{}', this.stop === undefined ? 'stop' : (STOP_TO_OPENAI[this.stop] ?? 'stop'));
    if (this.includeUsage) out += `data: ${this.head.slice(0, this.head.indexOf('"choices":'))}"choices":[],"usage":${enc(toOpenaiUsage(this.usage))}}\n\n`;
    return `${out}data: [DONE]\n\n`;
  }
}

type OpenBlock = { kind: 'text' | 'thinking' | 'tool_use'; index: number; tool?: number };

/** What every event encoder keeps besides its output: the usage so far and the stop reason. */
export abstract class DeltaBookkeeping {
  protected stop: StopReason | undefined;
  readonly usage: NormalizedUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };

  /** Usage and stop deltas produce no event of their own: true when `d` was one (and is now recorded). */
  protected record(d: InferenceDelta): boolean {
    if (d.type === 'usage') mergeUsage(this.usage, d.usage);
    else if (d.type === 'stop') this.stop = d.stop_reason;
    else return false;
    return true;
  }
}

/** Protocol-neutral deltas → Anthropic stream events (`message_start … message_stop`). */
export class AnthropicEventEncoder extends DeltaBookkeeping {
  private started = false;
  private block: OpenBlock | undefined;
  private next = 0;

  constructor(
    private readonly id: string,
    private readonly model: string,
  ) {
    super();
  }

  private ev(type: string, data: Json): string {
    return `event: ${type}\ndata: ${enc({ type, ...data })}\n\n`;
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return this.ev('message_start', {
      message: {
        id: this.id,
        type: 'message',
        role: 'assistant',
        model: this.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: this.usage.inputTokens, output_tokens: 0 },
      },
    });
  }

  private close(): string {
    if (!this.block) return '';
    const out = this.ev('content_block_stop', { index: this.block.index });
    this.block = undefined;
    return out;
  }

  private open(kind: OpenBlock['kind'], contentBlock: Json, tool?: number): string {
    const out = this.close();
    this.block = { kind, index: this.next++, tool };
    return out + this.ev('content_block_start', { index: this.block.index, content_block: contentBlock });
  }

  encode(d: InferenceDelta): string {
    if (this.record(d)) return '';
    let out = this.start();
    switch (d.type) {
      case 'text_delta':
        if (this.block?.kind !== 'text') out += this.open('text', { type: 'text', text: '' });
        return out + this.ev('content_block_delta', { index: this.block?.index, delta: { type: 'text_delta', text: d.text } });
      case 'thinking_delta':
        if (this.block?.kind !== 'thinking') out += this.open('thinking', { type: 'thinking', thinking: '', signature: '' });
        return out + this.ev('content_block_delta', { index: this.block?.index, delta: { type: 'thinking_delta', thinking: d.thinking } });
      case 'thinking_signature':
        if (this.block?.kind !== 'thinking') return out;
        return out + this.ev('content_block_delta', { index: this.block.index, delta: { type: 'signature_delta', signature: d.signature } });
      case 'redacted_thinking':
        out += this.open('thinking', { type: 'redacted_thinking', data: d.data });
        return out + this.close();
      case 'tool_call_start':
        return out + this.open('tool_use', { type: 'tool_use', id: d.id, name: d.name, input: {} }, d.index);
      case 'tool_call_delta':
        if (this.block?.kind !== 'tool_use') return out;
        return out + this.ev('content_block_delta', { index: this.block.index, delta: { type: 'input_json_delta', partial_json: d.arguments } });
      case 'error':
        return out + this.ev('error', { error: { type: anthropicErrorType(d.error.type), message: d.error.message } });
      default:
        return out;
    }
  }

  end(): string {
    let out = this.start() + this.close();
    out += this.ev('message_delta', {
      delta: { stop_reason: this.stop ?? 'end_turn', stop_sequence: null },
      usage: {
        input_tokens: this.usage.inputTokens - this.usage.cachedInputTokens,
        cache_read_input_tokens: this.usage.cachedInputTokens,
        output_tokens: this.usage.outputTokens,
      },
    });
    return out + this.ev('message_stop', {});
  }
}

const ANTHROPIC_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
]);
const anthropicErrorType = (t: string): string => (ANTHROPIC_ERROR_TYPES.has(t) ? t : 'api_error');
