import { createParser } from 'eventsource-parser';

/** One Server-Sent Events frame as sent (the WHATWG event-stream format): `data` is the joined data lines. */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
  /** The server's reconnection delay hint (`retry:`), in milliseconds. */
  retry?: number;
}

/**
 * Reads SSE frames from a response body with `eventsource-parser` (lines end in LF, CR or CRLF, also when a chunk
 * splits CR from LF; a blank line ends a frame; `:` lines are comments (heartbeats) and yield nothing; a frame without
 * `event:` is `message`; a frame without `data:` yields nothing, as the format says). `onBytes` is called for every
 * chunk, heartbeats included, so a caller can tell a live stream from a dead one.
 */
export async function* readSseFrames(body: ReadableStream<Uint8Array>, onBytes: () => void = () => undefined): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  const frames: SseFrame[] = [];
  let retry: number | undefined;
  const parser = createParser({
    onRetry: (ms) => (retry = ms),
    onEvent: (e) => {
      frames.push({ id: e.id, event: e.event ?? 'message', data: e.data, ...(retry !== undefined ? { retry } : {}) });
      retry = undefined;
    },
  });
  let endsInCr = false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (!done) onBytes();
      if (text) endsInCr = text.endsWith('\r');
      // The stream ended: a CR held back for a possible LF ends its line.
      parser.feed(done && endsInCr ? `${text}\n` : text);
      yield* frames.splice(0);
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}
