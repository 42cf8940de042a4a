import { constants } from 'node:fs';
import { matchesGlob } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { openFileAt, walkWorkspace } from './workspace-fs';

/** A grep or glob over a workspace, as the scan worker runs it (workspace-scan-runner posts it). */
export interface ScanSpec {
  kind: 'grep' | 'glob';
  root: string;
  /** Resolved directory or file to scan (resolveInside of the root). */
  base: string;
  /** grep: a JavaScript regular expression; glob: the glob the relative path must match. */
  pattern: string;
  /** grep only: files whose relative path matches this glob. */
  glob?: string;
  maxMatches: number;
}

export interface ScanResult {
  lines: string[];
  /** Lines longer than MAX_LINE_CHARS were matched on their first MAX_LINE_CHARS characters. */
  longLines: number;
  files: number;
}

const CHUNK = 64 * 1024;
export const MAX_LINE_CHARS = 64 * 1024;
const SHOWN_CHARS = 400;

/**
 * Runs a scan (in a worker thread: a pattern may backtrack for ever, a tree may be huge). Files are read in chunks
 * and split into lines as they stream, so memory stays bounded whatever their size; binary files (a NUL byte) are
 * skipped; the walk follows no symlink (workspace-fs).
 */
export async function scan(spec: ScanSpec): Promise<ScanResult> {
  const result: ScanResult = { lines: [], longLines: 0, files: 0 };
  if (spec.kind === 'glob') {
    await walkWorkspace(spec.root, spec.root, async (_dir, _name, rel) => {
      result.files += 1;
      if (matchesGlob(rel, spec.pattern)) result.lines.push(rel);
      return result.lines.length >= spec.maxMatches;
    });
    return result;
  }
  const re = new RegExp(spec.pattern);
  await walkWorkspace(spec.root, spec.base, async (dir, name, rel) => {
    if (spec.glob && !matchesGlob(rel, spec.glob)) return false;
    let file;
    try {
      file = await openFileAt(dir, name, constants.O_RDONLY);
    } catch {
      return false;
    }
    result.files += 1;
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      const decoder = new StringDecoder('utf8');
      const hits: string[] = [];
      let line = '';
      let long = false;
      let lineNo = 0;
      const test = () => {
        lineNo += 1;
        if (long) result.longLines += 1;
        if (re.test(line)) hits.push(`${rel}:${lineNo}: ${line.slice(0, SHOWN_CHARS)}`);
        line = '';
        long = false;
      };
      for (let pos = 0; ;) {
        const { bytesRead } = await file.read(buf, 0, CHUNK, pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
        const chunk = buf.subarray(0, bytesRead);
        if (chunk.includes(0)) return false; // binary: not searched
        const parts = decoder.write(chunk).split('\n');
        for (let i = 0; i < parts.length; i += 1) {
          if (line.length < MAX_LINE_CHARS) line += parts[i].slice(0, MAX_LINE_CHARS - line.length);
          if (parts[i].length > 0 && line.length >= MAX_LINE_CHARS) long = true;
          if (i < parts.length - 1) test();
          if (result.lines.length + hits.length >= spec.maxMatches) break;
        }
        if (result.lines.length + hits.length >= spec.maxMatches) break;
      }
      if (line.length > 0 && result.lines.length + hits.length < spec.maxMatches) test();
      result.lines.push(...hits);
    } finally {
      await file.close();
    }
    return result.lines.length >= spec.maxMatches;
  });
  return result;
}
