import { StringDecoder } from 'node:string_decoder';
import { storableText } from '@core/database/storable';
import type { RunWriter } from '../run-writer';

const FLUSH_MS = 200;
const FLUSH_BYTES = 32 * 1024;
/** Output beyond this is still captured in the stdout/stderr artifacts, only not streamed as events. */
export const MAX_STREAMED_BYTES = 1024 * 1024;

/**
 * Streams a command's output as `tool.shell.output_chunk` events, batched (every 200 ms or 32 KiB) so a
 * chatty command does not turn into one transaction per write. Flushes are sequential; a failed flush
 * (lease lost) is reported through `onError`.
 */
export class ChunkStreamer {
  private readonly decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  private readonly buffered = { stdout: '', stderr: '' };
  private readonly offsets = { stdout: 0, stderr: 0 };
  private streamed = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failed = false;

  constructor(
    private readonly writer: RunWriter,
    private readonly toolCallId: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  push(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    if (this.streamed >= MAX_STREAMED_BYTES || this.failed) return;
    const part = chunk.subarray(0, MAX_STREAMED_BYTES - this.streamed);
    this.streamed += part.length;
    this.buffered[stream] += this.decoders[stream].write(part);
    if (this.buffered.stdout.length + this.buffered.stderr.length >= FLUSH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const stream of ['stdout', 'stderr'] as const) {
      const data = this.buffered[stream];
      if (!data) continue;
      this.buffered[stream] = '';
      const offset = this.offsets[stream];
      this.offsets[stream] += Buffer.byteLength(data);
      this.chain = this.chain.then(async () => {
        if (this.failed) return;
        try {
          await this.writer.emit('tool.shell.output_chunk', { tool_call_id: this.toolCallId, stream, data: storableText(data), byte_offset: offset });
        } catch (err) {
          this.failed = true;
          this.onError(err);
        }
      });
    }
  }

  /** Flushes what is left and waits for every chunk event. */
  async close(): Promise<void> {
    for (const stream of ['stdout', 'stderr'] as const) this.buffered[stream] += this.decoders[stream].end();
    this.flush();
    await this.chain;
  }
}
