/** One file of a captured diff (docs/api.md §4 `agent_chat_changed_files`). */
export interface ChangedFile {
  path: string;
  additions: number;
  deletions: number;
  status: 'modified' | 'added' | 'deleted' | 'renamed' | 'binary';
  /** The file's own block of the unified diff (`diff --git …` to the next one). */
  diff: string;
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/**
 * A path as git prints it (core.quotePath): a name with a quote, a backslash, a control or a non-ASCII byte is
 * C-quoted — `"a\"b.txt"`, `"\303\251.txt"` (octal UTF-8 bytes) — and is decoded here to the file's real name.
 * `start` is the opening quote's index; returns the name and the index after the closing quote.
 */
function readQuoted(s: string, start: number): { name: string; end: number } {
  const bytes: number[] = [];
  let i = start + 1;
  while (i < s.length && s[i] !== '"') {
    if (s[i] === '\\' && i + 1 < s.length) {
      const octal = /^[0-7]{3}/.exec(s.slice(i + 1, i + 4));
      if (octal) {
        bytes.push(parseInt(octal[0], 8));
        i += 4;
        continue;
      }
      bytes.push(C_ESCAPES[s[i + 1]] ?? s.charCodeAt(i + 1));
      i += 2;
      continue;
    }
    bytes.push(...Buffer.from(s[i], 'utf8'));
    i += 1;
  }
  return { name: Buffer.from(bytes).toString('utf8'), end: i + 1 };
}

/**
 * A path field of a diff line (`rename to X`, `+++ b/X`): C-quoted, or as is (git ends an unquoted `---`/`+++` name
 * that has a space with a tab); `prefix` (`a/`, `b/`) dropped.
 */
export function gitPath(field: string, prefix = ''): string {
  const name = field.startsWith('"') ? readQuoted(field, 0).name : field.replace(/\t$/, '');
  return prefix && name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/**
 * The new path of a `diff --git a/X b/Y` header. Each side is C-quoted when it needs to be; two unquoted sides are
 * ambiguous with spaces, so the header of an unrenamed file (the only kind without a `rename to` / `+++` line that names
 * it) is split in the middle.
 */
function headerPath(rest: string): string {
  if (rest.endsWith('"')) {
    const open = rest.startsWith('"') ? readQuoted(rest, 0).end + 1 : rest.lastIndexOf(' "') + 1;
    return gitPath(rest.slice(open), 'b/');
  }
  if (rest.startsWith('"')) return gitPath(rest.slice(readQuoted(rest, 0).end + 1), 'b/');
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === ' ' && rest.slice(2, half) === rest.slice(half + 3)) return rest.slice(half + 3);
  const at = rest.indexOf(' b/');
  return at >= 0 ? rest.slice(at + 3) : rest;
}

/** Splits a `git diff` into per-file blocks with their counts and a best-effort status. */
export function parseUnifiedDiff(diff: string): ChangedFile[] {
  const files: ChangedFile[] = [];
  const blocks = diff.split(/^(?=diff --git )/m).filter((b) => b.startsWith('diff --git '));
  for (const block of blocks) {
    const lines = block.split('\n');
    let path = headerPath(lines[0].slice('diff --git '.length));
    let status: ChangedFile['status'] = 'modified';
    let additions = 0;
    let deletions = 0;
    let inHunk = false;
    for (const line of lines.slice(1)) {
      if (!inHunk) {
        if (line.startsWith('new file mode')) status = 'added';
        else if (line.startsWith('deleted file mode')) status = 'deleted';
        else if (line.startsWith('rename to ')) {
          status = 'renamed';
          path = gitPath(line.slice('rename to '.length));
        } else if (line.startsWith('Binary files') || line.startsWith('GIT binary patch')) status = 'binary';
        else if (line.startsWith('+++ ') && line !== '+++ /dev/null') path = gitPath(line.slice(4), 'b/');
        if (line.startsWith('@@')) inHunk = true;
        continue;
      }
      if (line.startsWith('+')) additions += 1;
      else if (line.startsWith('-')) deletions += 1;
    }
    files.push({ path, additions, deletions, status, diff: block });
  }
  return files;
}
/** `git diff --stat`-like text for a list of files. */
export function diffStatOf(files: ChangedFile[]): string {
  if (files.length === 0) return '';
  const width = Math.max(...files.map((f) => f.path.length));
  const lines = files.map((f) =>
    f.status === 'binary'
      ? ` ${f.path.padEnd(width)} | Bin`
      : ` ${f.path.padEnd(width)} | ${f.additions + f.deletions} ${'+'.repeat(Math.min(f.additions, 40))}${'-'.repeat(Math.min(f.deletions, 40))}`,
  );
  const add = files.reduce((n, f) => n + f.additions, 0);
  const del = files.reduce((n, f) => n + f.deletions, 0);
  lines.push(
    ` ${files.length} file${files.length === 1 ? '' : 's'} changed, ${add} insertion${add === 1 ? '' : 's'}(+), ${del} deletion${del === 1 ? '' : 's'}(-)`,
  );
  return lines.join('\n');
}

export const fileView = (f: ChangedFile) => ({ path: f.path, additions: f.additions, deletions: f.deletions, status: f.status });
