export interface LiveChunk {
  /** 1-based, gap-free per stream. */
  index: number;
  data: string;
}

export interface LiveReadResult {
  chunks: LiveChunk[];
  /** The producer marked the stream done and every chunk up to the end has been returned. */
  done: boolean;
  /** The stream is unknown here (never existed or expired): serve from Postgres instead. */
  expired: boolean;
}

export interface LiveReadOptions {
  /** Wait up to this long for a chunk after `afterIndex` when none is buffered yet (live tail). */
  blockMs?: number;
  limit?: number;
  /**
   * With `blockMs`: a stream unknown here is waited for like an empty one (its producer may not have started yet)
   * instead of being reported `expired` at once; `expired` still comes back when it is unknown after the wait.
   */
  waitForStart?: boolean;
}

/**
 * LiveStreamBuffer port (docs/design.md §3, §4.6): token streams teed here so any api process can resume a
 * stream from an index. Redis Streams in scaled mode, an in-memory ring in embedded mode.
 */
export abstract class LiveStreamBuffer {
  /** Appends one chunk and returns its index. */
  abstract append(streamId: string, data: string): Promise<number>;
  /** Chunks with index > afterIndex, in order. */
  abstract read(streamId: string, afterIndex: number, options?: LiveReadOptions): Promise<LiveReadResult>;
  abstract markDone(streamId: string): Promise<void>;
  abstract close(): Promise<void>;
}
