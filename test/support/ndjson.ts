import type { Loose } from './http';

/**
 * A streamed `text/plain` answer of one JSON object per line (docs/api.md §5's chat streams), read line by line as the bytes
 * arrive: `next()` resolves with each parsed line, `undefined` at the end; `close()` drops the connection.
 */
export class NdjsonReader {
  private buffered = '';
  private readonly decoder = new TextDecoder();
  private done = false;
  /** Every line parsed so far, in order. */
  readonly lines: Loose[] = [];

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly abort: AbortController,
  ) {}

  /** POSTs `body` as JSON; the answer's head has arrived when this resolves (a non-2xx answer too: read it with `text()`). */
  static async post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<NdjsonReader> {
    const abort = new AbortController();
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    return new NdjsonReader(res.status, res.headers, res.body!.getReader(), abort);
  }

  /** The next complete line, parsed (a line that is not JSON fails the test), or undefined once the answer ended. */
  async next(): Promise<Loose | undefined> {
    for (;;) {
      const nl = this.buffered.indexOf('\n');
      if (nl >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        const parsed: Loose = JSON.parse(line);
        this.lines.push(parsed);
        return parsed;
      }
      if (this.done) {
        if (this.buffered !== '') throw new Error(`the stream ended inside a line: ${JSON.stringify(this.buffered)}`);
        return undefined;
      }
      const { value, done } = await this.reader.read();
      if (done) this.done = true;
      else this.buffered += this.decoder.decode(value, { stream: true });
    }
  }

  /** Every remaining line until the end. */
  async rest(): Promise<Loose[]> {
    while ((await this.next()) !== undefined);
    return this.lines;
  }

  /** The whole (remaining) body as text: an error answer's JSON envelope. */
  async text(): Promise<string> {
    let text = this.buffered;
    for (;;) {
      const { value, done } = await this.reader.read();
      if (done) return text;
      text += this.decoder.decode(value, { stream: true });
    }
  }

  /** The client leaves: the connection is dropped. */
  close(): void {
    this.abort.abort();
  }
}
