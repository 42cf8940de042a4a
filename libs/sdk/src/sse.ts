/** One Server-Sent Events frame as sent (the WHATWG event-stream format): `data` is the joined data lines. */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
  /** The server's reconnection delay hint (`retry:`), in milliseconds. */
  retry?: number;
}

/**
 * Reads SSE frames from a response body: lines end in LF, CR or CRLF (also when a chunk splits CR from LF); a blank
 * line ends a frame; `:` lines are comments (heartbeats) and yield nothing; a frame without `event:` is `message`.
 * `onBytes` is called for every chunk, heartbeats included, so a caller can tell a live stream from a dead one.
 */
export async function* readSseFrames(body: ReadableStream<Uint8Array>, onBytes: () => void = () => undefined): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  let frame: { id?: string; event?: string; data: string[]; retry?: number; fields: number } = { data: [], fields: 0 };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        // The stream ended: a CR held back for a possible LF ends its line.
        buffer += decoder.decode() + (buffer.endsWith('\r') ? '\n' : '');
      } else {
        onBytes();
        buffer += decoder.decode(value, { stream: true });
      }
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer[i];
        if (c !== '\n' && c !== '\r') continue;
        // A CR at the very end may be the first half of a CRLF split across chunks: wait for the next one.
        if (c === '\r' && i === buffer.length - 1) break;
        const line = buffer.slice(start, i);
        if (c === '\r' && buffer[i + 1] === '\n') i++;
        start = i + 1;
        if (line === '') {
          if (frame.fields > 0) {
            yield { id: frame.id, event: frame.event ?? 'message', data: frame.data.join('\n'), ...(frame.retry !== undefined ? { retry: frame.retry } : {}) };
          }
          frame = { data: [], fields: 0 };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        frame.fields++;
        if (field === 'data') frame.data.push(value);
        else if (field === 'event') frame.event = value;
        else if (field === 'id') frame.id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value);
      }
      buffer = buffer.slice(start);
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}
