import { request } from 'node:http';
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

/**
 * The one SSE parser of the tests (the wire format: blocks separated by a blank line, `field: value` lines, `:` comments).
 * Returns the complete frames and comments of `text` and the unfinished rest.
 */
export function parseSseFrames(text: string): { frames: SseFrame[]; comments: string[]; rest: string } {
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  let rest = text;
  let idx: number;
  while ((idx = rest.indexOf('\n\n')) >= 0) {
    const block = rest.slice(0, idx);
    rest = rest.slice(idx + 2);
    const frame: SseFrame = { data: '' };
    let fields = 0;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '') continue;
      if (line.startsWith(':')) {
        comments.push(line.slice(1).trim());
        continue;
      }
      fields++;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') frame.id = value;
      else if (field === 'event') frame.event = value;
      else if (field === 'retry') frame.retry = Number(value);
      else if (field === 'data') data.push(value);
    }
    frame.data = data.join('\n');
    if (fields > 0) frames.push(frame);
  }
  return { frames, comments, rest };
}

/** Parses a whole SSE body into events with JSON data. */
export const sseEvents = (text: string): SseEvent[] => parseSseFrames(text).frames.map(parsed);

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
  private buffer = '';
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
    const { frames, comments, rest } = parseSseFrames(this.buffer + chunk);
    this.buffer = rest;
    this.comments.push(...comments);
    for (const f of frames) {
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
