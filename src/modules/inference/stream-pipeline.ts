import { transportError, UpstreamError } from '@modules/providers';
import type { CancelSignal } from './client-abort';
import type { OpenStream } from './call-types';
import { ContentBlock, InferenceDelta, Json, mergeUsage, NormalizedUsage, StopReason, ToolCall } from './protocol/normalized';
import type { NormalizedMessage } from './protocol/response-translation';
import { parseFrame, SseFramer } from './protocol/sse';
import { AnthropicEventDecoder, OpenaiChunkDecoder } from './protocol/stream-codecs';

/** Thrown after an upstream sent a protocol error frame mid-stream (the frame itself was already yielded). */
export class UpstreamStreamError extends UpstreamError {
  constructor(message: string) {
    super('http', message, { retryable: true, status: 502 });
  }
}

/**
 * Decodes a committed upstream stream into protocol-neutral deltas. Throws an UpstreamError when the
 * upstream breaks (idle timeout, dropped connection, stream ended without its terminator).
 */
export async function* decodeUpstreamStream(open: OpenStream, signal?: CancelSignal): AsyncGenerator<InferenceDelta> {
  const framer = new SseFramer();
  const anthropic = open.upstreamProtocol === 'anthropic';
  const decoder = anthropic ? new AnthropicEventDecoder() : new OpenaiChunkDecoder();
  const out: InferenceDelta[] = [];
  let ended = false;
  let chunk: Buffer | undefined = open.upstream.first;
  while (chunk) {
    for (const frame of framer.push(chunk)) {
      const f = parseFrame(frame);
      if (!f.data) continue;
      if (f.data === '[DONE]') {
        ended = true;
        continue;
      }
      let obj: Json;
      try {
        obj = JSON.parse(f.data) as Json;
      } catch {
        continue;
      }
      if (anthropic && obj.type === 'message_stop') ended = true;
      decoder.decode(obj, out);
      for (const d of out) {
        yield d;
        if (d.type === 'error') throw new UpstreamStreamError(`${open.selected.provider.id} reported an error mid-stream: ${d.error.message}`);
      }
      out.length = 0;
    }
    try {
      chunk = await open.upstream.reader.next();
    } catch (err) {
      throw transportError(open.selected.provider, err, signal);
    }
  }
  if (!ended) throw new UpstreamError('network', `${open.selected.provider.id} closed the stream before it was complete`, { retryable: true });
}

/** Assembles deltas into the final message (text, content blocks, tool calls, stop reason, usage). */
export class StreamAccumulator {
  readonly usage: NormalizedUsage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
  private id = '';
  private model = '';
  private stop: StopReason | null = null;
  private readonly blocks: ContentBlock[] = [];
  private readonly tools = new Map<number, { block: { type: 'tool_use'; id: string; name: string; input: unknown }; args: string }>();

  private last(): ContentBlock | undefined {
    return this.blocks[this.blocks.length - 1];
  }

  add(d: InferenceDelta): void {
    switch (d.type) {
      case 'message_start':
        this.id ||= d.id;
        this.model ||= d.model;
        return;
      case 'text_delta': {
        const l = this.last();
        if (l?.type === 'text') (l as { text: string }).text += d.text;
        else this.blocks.push({ type: 'text', text: d.text });
        return;
      }
      case 'thinking_delta': {
        const l = this.last();
        if (l?.type === 'thinking') (l as { thinking: string }).thinking += d.thinking;
        else this.blocks.push({ type: 'thinking', thinking: d.thinking, signature: '' });
        return;
      }
      case 'thinking_signature': {
        const l = this.last();
        if (l?.type === 'thinking') (l as { signature: string }).signature = d.signature;
        return;
      }
      case 'redacted_thinking':
        this.blocks.push({ type: 'redacted_thinking', data: d.data });
        return;
      case 'tool_call_start': {
        const block = { type: 'tool_use' as const, id: d.id, name: d.name, input: {} as unknown };
        this.blocks.push(block);
        this.tools.set(d.index, { block, args: '' });
        return;
      }
      case 'tool_call_delta': {
        const t = this.tools.get(d.index);
        if (t) t.args += d.arguments;
        return;
      }
      case 'usage':
        mergeUsage(this.usage, d.usage);
        return;
      case 'stop':
        this.stop = d.stop_reason;
        return;
      default:
        return;
    }
  }

  message(): NormalizedMessage {
    const toolCalls: ToolCall[] = [];
    for (const [, t] of [...this.tools].sort((a, b) => a[0] - b[0])) {
      try {
        t.block.input = t.args.trim() === '' ? {} : (JSON.parse(t.args) as unknown);
      } catch {
        t.block.input = { _raw: t.args };
      }
      toolCalls.push({ id: t.block.id, type: 'function', function: { name: t.block.name, arguments: t.args || '{}' } });
    }
    return {
      id: this.id,
      model: this.model,
      content_blocks: this.blocks,
      tool_calls: toolCalls,
      text: this.blocks
        .filter((b) => b.type === 'text')
        .map((b) => (b as { text: string }).text)
        .join(''),
      stop_reason: this.stop,
      usage: this.usage,
    };
  }
}
