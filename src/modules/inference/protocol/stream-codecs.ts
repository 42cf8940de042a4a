import { anthropicUsage, InferenceDelta, isObject, Json, OPENAI_TO_STOP, openaiUsage } from './normalized';

/** OpenAI `chat.completion.chunk` objects → protocol-neutral deltas. */
export class OpenaiChunkDecoder {
  private started = false;
  private readonly tools = new Set<number>();

  decode(chunk: Json, out: InferenceDelta[]): void {
    if (!this.started) {
      this.started = true;
      out.push({ type: 'message_start', id: String(chunk.id ?? ''), model: String(chunk.model ?? '') });
    }
    if (isObject(chunk.error)) {
      out.push({ type: 'error', error: { type: String(chunk.error.type ?? 'api_error'), message: String(chunk.error.message ?? 'upstream error') } });
      return;
    }
    const choice = Array.isArray(chunk.choices) && isObject(chunk.choices[0]) ? chunk.choices[0] : undefined;
    if (choice) {
      const d = isObject(choice.delta) ? choice.delta : {};
      const reasoning = typeof d.reasoning_content === 'string' ? d.reasoning_content : typeof d.reasoning === 'string' ? d.reasoning : '';
      if (reasoning) out.push({ type: 'thinking_delta', thinking: reasoning });
      if (typeof d.content === 'string' && d.content !== '') out.push({ type: 'text_delta', text: d.content });
      if (Array.isArray(d.tool_calls)) {
        for (const tc of d.tool_calls) {
          if (!isObject(tc)) continue;
          const index = typeof tc.index === 'number' ? tc.index : 0;
          const f = isObject(tc.function) ? tc.function : {};
          if (!this.tools.has(index)) {
            this.tools.add(index);
            out.push({ type: 'tool_call_start', index, id: String(tc.id ?? `call_${index}`), name: String(f.name ?? '') });
          }
          if (typeof f.arguments === 'string' && f.arguments !== '') out.push({ type: 'tool_call_delta', index, arguments: f.arguments });
        }
      }
      if (typeof choice.finish_reason === 'string') out.push({ type: 'stop', stop_reason: OPENAI_TO_STOP[choice.finish_reason] ?? choice.finish_reason });
    }
    const usage = openaiUsage(chunk.usage);
    if (usage) out.push({ type: 'usage', usage });
  }
}

/** Anthropic stream events → protocol-neutral deltas. */
export class AnthropicEventDecoder {
  private readonly toolIndexOfBlock = new Map<number, number>();
  private tools = 0;

  decode(event: Json, out: InferenceDelta[]): void {
    switch (event.type) {
      case 'message_start': {
        const m = isObject(event.message) ? event.message : {};
        out.push({ type: 'message_start', id: String(m.id ?? ''), model: String(m.model ?? '') });
        const u = anthropicUsage(m.usage);
        if (u) out.push({ type: 'usage', usage: { inputTokens: u.inputTokens, cachedInputTokens: u.cachedInputTokens } });
        return;
      }
      case 'content_block_start': {
        const b = isObject(event.content_block) ? event.content_block : {};
        const index = typeof event.index === 'number' ? event.index : 0;
        if (b.type === 'text' && typeof b.text === 'string' && b.text) out.push({ type: 'text_delta', text: b.text });
        else if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking) out.push({ type: 'thinking_delta', thinking: b.thinking });
        else if (b.type === 'redacted_thinking') out.push({ type: 'redacted_thinking', data: String(b.data ?? '') });
        else if (b.type === 'tool_use' || b.type === 'server_tool_use') {
          const ti = this.tools++;
          this.toolIndexOfBlock.set(index, ti);
          out.push({ type: 'tool_call_start', index: ti, id: String(b.id ?? ''), name: String(b.name ?? '') });
          if (isObject(b.input) && Object.keys(b.input).length > 0) out.push({ type: 'tool_call_delta', index: ti, arguments: JSON.stringify(b.input) });
        }
        return;
      }
      case 'content_block_delta': {
        const d = isObject(event.delta) ? event.delta : {};
        if (d.type === 'text_delta') out.push({ type: 'text_delta', text: String(d.text ?? '') });
        else if (d.type === 'thinking_delta') out.push({ type: 'thinking_delta', thinking: String(d.thinking ?? '') });
        else if (d.type === 'signature_delta') out.push({ type: 'thinking_signature', signature: String(d.signature ?? '') });
        else if (d.type === 'input_json_delta') {
          const ti = this.toolIndexOfBlock.get(typeof event.index === 'number' ? event.index : 0) ?? 0;
          if (d.partial_json) out.push({ type: 'tool_call_delta', index: ti, arguments: String(d.partial_json) });
        }
        return;
      }
      case 'message_delta': {
        const d = isObject(event.delta) ? event.delta : {};
        if (typeof d.stop_reason === 'string') out.push({ type: 'stop', stop_reason: d.stop_reason });
        const u = anthropicUsage(event.usage);
        if (u) out.push({ type: 'usage', usage: u });
        return;
      }
      case 'error': {
        const e = isObject(event.error) ? event.error : {};
        out.push({ type: 'error', error: { type: String(e.type ?? 'api_error'), message: String(e.message ?? 'upstream error') } });
        return;
      }
      default:
        return;
    }
  }
}
