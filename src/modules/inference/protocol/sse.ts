const LF2 = Buffer.from('\n\n');
const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * Splits a byte stream into complete SSE frames (each returned with its terminating blank line) without
 * copying: frames are subarrays of the incoming chunks, except when a frame spans two chunks.
 */
export class SseFramer {
  private rest: Buffer | undefined;

  push(chunk: Buffer): Buffer[] {
    let buf = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    this.rest = undefined;
    const frames: Buffer[] = [];
    let start = 0;
    for (;;) {
      let end = buf.indexOf(LF2, start);
      let sepLen = 2;
      const crlf = buf.indexOf(CRLF2, start);
      if (crlf !== -1 && (end === -1 || crlf < end)) {
        end = crlf;
        sepLen = 4;
      }
      if (end === -1) break;
      frames.push(buf.subarray(start, end + sepLen));
      start = end + sepLen;
    }
    if (start < buf.length) {
      buf = buf.subarray(start);
      this.rest = Buffer.from(buf);
    }
    return frames;
  }

  /** Bytes left over after the stream ended (an unterminated last frame). */
  flush(): Buffer | undefined {
    const rest = this.rest;
    this.rest = undefined;
    return rest && rest.length > 0 ? rest : undefined;
  }
}

export interface SseFrame {
  event: string | undefined;
  data: string;
}

/** Parses one frame's text into its event name and (joined) data lines. */
export function parseFrame(frame: Buffer | string): SseFrame {
  const text = typeof frame === 'string' ? frame : frame.toString('utf8');
  let event: string | undefined;
  let data: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('data:')) {
      const v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === undefined ? v : `${data}\n${v}`;
    } else if (line.startsWith('event:')) {
      event = line.slice(6).trim();
    }
  }
  return { event, data: data ?? '' };
}

/** Starts-with on bytes, for cheap frame classification on the passthrough path. */
export function startsWith(buf: Buffer, prefix: Buffer): boolean {
  return buf.length >= prefix.length && buf.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}
