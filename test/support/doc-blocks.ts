import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The fenced code blocks of a Markdown file and how the doc tests cover each, read from an HTML comment on the line
 * before the opening fence (blank lines between are allowed):
 *
 *   <!-- doctest: run <id> -->                 run it against the test server; the suite asserts what <id> prints
 *   <!-- doctest: run <id> after <other> -->   run it as one program after block <other> of the same file
 *   <!-- doctest: check <how> -->              checked another way: `commands` (npm scripts, files, variables and
 *                                              programs it names exist), `paths` (the files it names exist)
 *   <!-- doctest: skip — <reason> -->          not runnable here (a Docker engine, a cluster, a cloud account)
 *
 * A block without one of these is `uncovered`: the suite fails and names its line.
 */
export type Coverage =
  | { kind: 'run'; id: string; after?: string }
  | { kind: 'check'; how: 'commands' | 'paths' }
  | { kind: 'skip'; reason: string }
  | { kind: 'uncovered'; problem: string };

export interface DocBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string's first word (`bash`, `ts`, `json`, or '' for none). */
  lang: string;
  code: string;
  coverage: Coverage;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)/;
const DIRECTIVE = /^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$/;

/** Every fenced block of `file` (relative to `root`), in order. An unclosed fence is an error (the rest would be code). */
export function readDocBlocks(root: string, file: string): DocBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    const end = lines.findIndex((l, j) => j > i && l.trimStart().startsWith(fence) && l.trim().replace(/[`~]/g, '') === '');
    if (end < 0) throw new Error(`${file}:${i + 1}: a code fence that is never closed`);
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join('\n');
    blocks.push({ file, line: i + 1, lang, code, coverage: coverageBefore(lines, i) });
    i = end;
  }
  return blocks;
}

/** The directive on the last non-blank line before line `i` (0-based), parsed. */
function coverageBefore(lines: string[], i: number): Coverage {
  let j = i - 1;
  while (j >= 0 && lines[j].trim() === '') j--;
  const m = j >= 0 ? DIRECTIVE.exec(lines[j]) : null;
  if (!m) return { kind: 'uncovered', problem: 'no <!-- doctest: … --> comment before it' };
  return parseDirective(m[1]);
}

export function parseDirective(text: string): Coverage {
  const run = /^run\s+([\w-]+)(?:\s+after\s+([\w-]+))?$/.exec(text);
  if (run) return { kind: 'run', id: run[1], ...(run[2] ? { after: run[2] } : {}) };
  const check = /^check\s+(commands|paths)$/.exec(text);
  if (check) return { kind: 'check', how: check[1] as 'commands' | 'paths' };
  const skip = /^skip\s*[—:-]\s*(\S.*)$/.exec(text);
  if (skip) return { kind: 'skip', reason: skip[1] };
  return { kind: 'uncovered', problem: `an unreadable directive "doctest: ${text}"` };
}

/** `README.md:243 (ts)`: where a block is, for failure messages. */
export const where = (b: DocBlock): string => `${b.file}:${b.line} (${b.lang || 'no language'})`;
