import { request } from 'node:http';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { waitFor } from './infra';
import type { Loose } from './http';

/** One SSE frame as sent: `data` is the joined data lines, unparsed. */
export interface SseFrame {
  id?: string;
  event?: string;
  retry?: number;
  data: string;
}

/** A frame with its data JSON-parsed when it is JSON. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: Loose;
}

const parsed = (f: SseFrame): SseEvent => {
  let data: unknown = f.data;
  try {
    data = JSON.parse(f.data);
  } catch {
    // not JSON
  }
  return { ...(f.id !== undefined ? { id: f.id } : {}), ...(f.event !== undefined ? { event: f.event } : {}), data };
};

/** What a parser of the tests collects: frames (with their `retry:`) and comments, as they complete. */
interface FrameSink {
  frames: SseFrame[];
  comments: string[];
}

/**
 * The SSE parser of the tests: `eventsource-parser` (the one the SDK reads with), collecting complete frames and
 * `:` comments (trimmed) into `sink`; feed it text as it arrives.
 */
function frameParser(sink: FrameSink): EventSourceParser {
  let retry: number | undefined;
  return createParser({
    onRetry: (ms) => (retry = ms),
    onComment: (comment) => sink.comments.push(comment.trim()),
    onEvent: (e) => {
      sink.frames.push({
        ...(e.id !== undefined ? { id: e.id } : {}),
        ...(e.event !== undefined ? { event: e.event } : {}),
        ...(retry !== undefined ? { retry } : {}),
        data: e.data,
      });
      retry = undefined;
    },
  });
}

/** Parses a whole SSE body into events with JSON data. */
export function sseEvents(text: string): SseEvent[] {
  const sink: FrameSink = { frames: [], comments: [] };
  frameParser(sink).feed(text);
  return sink.frames.map(parsed);
}

/**
 * The one SSE reader of the tests: a real streaming HTTP client (GET or POST with a JSON body) that records frames as
 * they arrive, with comments kept apart; `until` waits for a matching event, `close()` disconnects like a client would.
 */
export class SseReader {
  readonly frames: SseFrame[] = [];
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  ended = false;
  private readonly parser: EventSourceParser;
  /** Frames the parser completed and `feed` has not yet delivered. */
  private readonly received: FrameSink;
  private readonly req: ReturnType<typeof request>;
  private readonly waiters: Array<{ pred: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = [];
  readonly opened: Promise<void>;
  readonly done: Promise<void>;

  constructor(url: string, opts: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {}) {
    let resolveOpen!: () => void;
    let resolveDone!: () => void;
    this.opened = new Promise((r) => (resolveOpen = r));
    this.done = new Promise((r) => (resolveDone = r));
    const finish = () => {
      this.ended = true;
      resolveOpen();
      resolveDone();
    };
    const received: FrameSink = { frames: [], comments: this.comments };
    this.parser = frameParser(received);
    this.received = received;
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers: Record<string, string> = { accept: 'text/event-stream', ...(payload ? { 'content-type': 'application/json' } : {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    this.req = request(url, { method: opts.method ?? (payload ? 'POST' : 'GET'), headers: { ...headers, ...opts.headers } }, (res) => {
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      resolveOpen();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.feed(chunk));
      res.on('end', finish);
      res.on('error', finish);
      res.on('close', finish);
    });
    this.req.on('error', finish);
    this.req.end(payload);
  }

  private feed(chunk: string): void {
    this.parser.feed(chunk);
    for (const f of this.received.frames.splice(0)) {
      this.frames.push(f);
      const e = parsed(f);
      this.events.push(e);
      for (const w of [...this.waiters]) {
        if (!w.pred(e)) continue;
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  }

  json(i: number): Loose {
    return JSON.parse(this.frames[i].data);
  }

  /** The first event (seen or to come) matching `pred`. */
  until(pred: (e: SseEvent) => boolean): Promise<SseEvent> {
    const hit = this.events.find(pred);
    return hit ? Promise.resolve(hit) : new Promise<SseEvent>((resolve) => this.waiters.push({ pred, resolve }));
  }

  waitFrames(n: number, timeoutMs = 20_000): Promise<SseFrame[]> {
    return waitFor(() => (this.frames.length >= n ? this.frames : undefined), { timeoutMs, what: `${n} SSE frames (have ${this.frames.length})` });
  }

  close(): void {
    this.req.destroy();
  }
}
