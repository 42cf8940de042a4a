/** One file of a captured diff (seed 003 `agent_chat_changed_files`). */
export interface ChangedFile {
  path: string;
  additions: number;
  deletions: number;
  status: 'modified' | 'added' | 'deleted' | 'renamed' | 'binary';
  /** The file's own block of the unified diff (`diff --git …` to the next one). */
  diff: string;
}

const unquote = (p: string): string => (p.startsWith('"') && p.endsWith('"') ? (JSON.parse(p) as string) : p);

/** Splits a `git diff` into per-file blocks with their counts and a best-effort status. */
export function parseUnifiedDiff(diff: string): ChangedFile[] {
  const files: ChangedFile[] = [];
  const blocks = diff.split(/^(?=diff --git )/m).filter((b) => b.startsWith('diff --git '));
  for (const block of blocks) {
    const lines = block.split('\n');
    const header = /^diff --git (?:"?a\/)(.+?)"? (?:"?b\/)(.+?)"?$/.exec(lines[0]);
    let path = header ? unquote(header[2]) : lines[0].slice('diff --git '.length);
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
          path = unquote(line.slice('rename to '.length));
        } else if (line.startsWith('Binary files') || line.startsWith('GIT binary patch')) status = 'binary';
        else if (line.startsWith('+++ ') && line !== '+++ /dev/null')
          path = unquote(
            line
              .slice(4)
              .replace(/^"?b\//, '')
              .replace(/"$/, ''),
          );
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
