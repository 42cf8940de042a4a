import type { LiveDeltaFrame, LiveResetFrame } from '@modules/inference';
import type { GeneratedReply, ToolCallJson } from './chat-message';

/** One streamed `delta` frame of a turn (docs/api.md §3 SSE): the live-stream frame InferenceService tees. */
export type DeltaFrame = LiveDeltaFrame;

/** Folds delta frames back into a reply (text, thinking, tool calls). */
export class FrameAccumulator {
  private readonly blocks: Array<Record<string, unknown>> = [];
  private readonly calls = new Map<number, ToolCallJson & { blockIndex: number }>();

  /** The model answered anew after a `reset` frame (docs/takeover.md): what came before it is not part of the reply. */
  restarted = false;

  add(frame: DeltaFrame | LiveResetFrame): void {
    if ('type' in frame) {
      if (frame.type === 'reset') {
        this.blocks.length = 0;
        this.calls.clear();
        this.restarted = true;
      }
      return;
    }
    const last = this.blocks[this.blocks.length - 1];
    if (frame.reasoning !== undefined || frame.reasoning_signature !== undefined) {
      if (last?.type === 'thinking') {
        last.thinking = `${String(last.thinking)}${frame.reasoning ?? ''}`;
        if (frame.reasoning_signature) last.signature = frame.reasoning_signature;
      } else this.blocks.push({ type: 'thinking', thinking: frame.reasoning ?? '', signature: frame.reasoning_signature ?? '' });
    }
    if (frame.content !== undefined) {
      if (last?.type === 'text') last.text = `${String(last.text)}${frame.content}`;
      else this.blocks.push({ type: 'text', text: frame.content });
    }
    for (const t of frame.tool_calls ?? []) {
      let call = this.calls.get(t.index);
      if (!call) {
        call = { id: t.id ?? '', type: 'function', function: { name: t.function.name ?? '', arguments: '' }, blockIndex: this.blocks.length };
        this.calls.set(t.index, call);
        this.blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: {} });
      }
      call.function.arguments += t.function.arguments ?? '';
    }
  }

  get empty(): boolean {
    return this.blocks.length === 0;
  }

  reply(): GeneratedReply {
    const tool_calls: ToolCallJson[] = [];
    for (const [, c] of [...this.calls].sort((a, b) => a[0] - b[0])) {
      tool_calls.push({ id: c.id, type: 'function', function: { ...c.function, arguments: c.function.arguments || '{}' } });
      let input: unknown;
      try {
        input = c.function.arguments.trim() === '' ? {} : JSON.parse(c.function.arguments);
      } catch {
        input = {};
      }
      this.blocks[c.blockIndex] = { ...this.blocks[c.blockIndex], input };
    }
    const text = this.blocks
      .filter((b) => b.type === 'text')
      .map((b) => String(b.text))
      .join('');
    return { text, content_blocks: this.blocks.map((b) => ({ ...b })), tool_calls };
  }
}
