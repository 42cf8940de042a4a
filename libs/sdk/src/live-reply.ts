import type { AgentChatFrame } from './streams';

/**
 * The reply text a client shows while a turn streams, folded from the agent-chat stream's frames: `delta` content is
 * appended; a `message` with `resume_fallback` (the persisted partial, after a lost buffer) replaces what was shown;
 * a `reset` (a model call made again from the start after a takeover, docs/takeover.md) drops the deltas of its stream
 * from its `from_index` on — and, when nothing of that stream is left, the fallback partial too — so what follows is
 * the reply anew. After the turn's settled `message`, `text` is that message's content.
 *
 *   const reply = new LiveReply();
 *   for await (const frame of hecate.streams.agentChat(id)) { reply.apply(frame); render(reply.text); }
 */
export class LiveReply {
  private base = '';
  private parts: Array<{ stream: string; index: number; text: string }> = [];

  get text(): string {
    return this.base + this.parts.map((p) => p.text).join('');
  }

  /** Folds one frame in; returns the text now shown. Frames of other kinds leave it as it is. */
  apply(frame: AgentChatFrame): string {
    if (frame.event === 'delta') {
      const at = cursorOf(frame.id);
      if (at && typeof frame.data.content === 'string') this.parts.push({ ...at, text: frame.data.content });
    } else if (frame.event === 'reset') {
      const at = cursorOf(frame.id);
      if (at) {
        this.parts = this.parts.filter((p) => p.stream === at.stream && p.index < frame.data.from_index);
        if (this.parts.length === 0) this.base = '';
      }
    } else if (frame.event === 'message' && 'role' in frame.data && frame.data.role === 'assistant') {
      const settled = frame.data as { content?: unknown; resume_fallback?: boolean };
      this.base = typeof settled.content === 'string' ? settled.content : '';
      this.parts = [];
    }
    return this.text;
  }
}

/** The stream and index of an agent-chat frame id `<turn>:<stream>:<index>`. */
function cursorOf(id: string | undefined): { stream: string; index: number } | undefined {
  const m = id ? /^[^:]+:([^:]+):(\d+)$/.exec(id) : null;
  return m ? { stream: m[1], index: Number(m[2]) } : undefined;
}
