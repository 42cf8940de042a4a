import { sleep } from '@core/async/sleep';

/** One server-sent event as received (`data` is the joined data lines, unparsed). */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** Parses an SSE body: blocks separated by a blank line, `field: value` lines, `:` comments (heartbeats) skipped. */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  // A CR that ends a chunk may be the first half of a CRLF: it waits for the next chunk.
  let heldCr = false;
  for await (const chunk of body) {
    let text: string = (heldCr ? '\r' : '') + decoder.decode(chunk, { stream: true });
    heldCr = text.endsWith('\r');
    if (heldCr) text = text.slice(0, -1);
    buffer += text.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message = parseBlock(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (message) yield message;
    }
  }
}

function parseBlock(block: string): SseMessage | null {
  const message: SseMessage = { data: '' };
  const data: string[] = [];
  let fields = 0;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    fields++;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') message.id = value;
    else if (field === 'event') message.event = value;
    else if (field === 'data') data.push(value);
  }
  message.data = data.join('\n');
  return fields > 0 ? message : null;
}

/** An HTTP answer that reconnecting cannot fix (a 4xx other than 429): the stream stops with it. */
export class SseRefusedError extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
  }
}

export interface FollowSseOptions {
  url: string;
  headers: Record<string, string>;
  /** Ends the stream (the generator returns). */
  signal: AbortSignal;
  /** The error for a non-2xx answer (read from its body). */
  httpError(res: Response): Promise<Error>;
  /** Reconnects in a row without receiving an event before giving up (default 8). */
  maxFailures?: number;
}

/**
 * A resumable SSE subscription: on a dropped connection (a restarted server, a proxy timeout) it reconnects with
 * `Last-Event-ID` = the last id received, with back-off, so the consumer sees every event once and in order. The
 * consumer ends it by leaving its `for await` or by aborting `signal`.
 */
export async function* followSse(opts: FollowSseOptions): AsyncGenerator<SseMessage> {
  let lastId: string | undefined;
  let failures = 0;
  const maxFailures = opts.maxFailures ?? 8;
  for (;;) {
    if (opts.signal.aborted) return;
    let failure: unknown = null;
    try {
      const res = await fetch(opts.url, {
        headers: { ...opts.headers, accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
        signal: opts.signal,
      });
      if (!res.ok || !res.body) {
        const err = await opts.httpError(res);
        if (res.status >= 400 && res.status < 500 && res.status !== 429) throw new SseRefusedError(err);
        throw err;
      }
      let received = false;
      for await (const message of sseMessages(res.body)) {
        received = true;
        failures = 0;
        if (message.id !== undefined) lastId = message.id;
        yield message;
      }
      // Ended by the server before the consumer was done: reconnect (a connection without an event counts as a failure).
      if (!received) failure = new Error(`${opts.url}: the stream closed without an event`);
    } catch (err) {
      if (opts.signal.aborted) return;
      if (err instanceof SseRefusedError) throw err.reason;
      failure = err;
    }
    if (failure && ++failures > maxFailures) throw failure;
    await sleep(Math.min(250 * 2 ** failures, 5000), opts.signal);
  }
}
