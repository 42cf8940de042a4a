import { diffStatOf, gitPath, parseUnifiedDiff } from './changed-files';

const DIFF = [
  'diff --git a/README.md b/README.md',
  'index 1111111..2222222 100644',
  '--- a/README.md',
  '+++ b/README.md',
  '@@ -1,2 +1,2 @@',
  ' keep',
  '-old line',
  '+new line',
  '+another',
  'diff --git a/src/new.ts b/src/new.ts',
  'new file mode 100644',
  'index 0000000..3333333',
  '--- /dev/null',
  '+++ b/src/new.ts',
  '@@ -0,0 +1 @@',
  '+export const x = 1;',
  'diff --git a/gone.txt b/gone.txt',
  'deleted file mode 100644',
  'index 4444444..0000000',
  '--- a/gone.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
  'diff --git a/old name.txt b/new name.txt',
  'similarity index 100%',
  'rename from old name.txt',
  'rename to new name.txt',
  'diff --git a/img.png b/img.png',
  'new file mode 100644',
  'index 0000000..5555555',
  'GIT binary patch',
  'literal 3',
  'KcmZQz00000',
  '',
].join('\n');

describe('parseUnifiedDiff', () => {
  it('splits a git diff into files with counts and statuses', () => {
    const files = parseUnifiedDiff(DIFF);
    expect(files.map((f) => [f.path, f.status, f.additions, f.deletions])).toEqual([
      ['README.md', 'modified', 2, 1],
      ['src/new.ts', 'added', 1, 0],
      ['gone.txt', 'deleted', 0, 1],
      ['new name.txt', 'renamed', 0, 0],
      ['img.png', 'binary', 0, 0],
    ]);
    expect(files[0].diff.startsWith('diff --git a/README.md b/README.md\n')).toBe(true);
    expect(files[0].diff).not.toContain('src/new.ts');
    expect(files.map((f) => f.diff).join('')).toBe(DIFF);
  });

  it('is empty for no diff, and the stat summarises', () => {
    expect(parseUnifiedDiff('')).toEqual([]);
    const stat = diffStatOf(parseUnifiedDiff(DIFF).slice(0, 2));
    expect(stat.split('\n')).toEqual([' README.md  | 3 ++-', ' src/new.ts | 1 +', ' 2 files changed, 3 insertions(+), 1 deletion(-)']);
  });
});

describe('git-quoted names', () => {
  // As git 2.x prints them (core.quotePath on): quotes, backslashes, controls and non-ASCII bytes C-quoted; an unquoted
  // name with a space ends its ---/+++ line with a tab.
  /** A one-line change of `name` as git prints it: `name` is git's field without the a/ b/ prefix (quoted or not). */
  const modified = (name: string): string => {
    const quoted = name.startsWith('"');
    const side = (prefix: string) => (quoted ? `"${prefix}${name.slice(1)}` : `${prefix}${name}`);
    const tab = !quoted && name.includes(' ') ? '\t' : '';
    return [
      `diff --git ${side('a/')} ${side('b/')}`,
      'index 587be6b..b77b4eb 100644',
      `--- ${side('a/')}${tab}`,
      `+++ ${side('b/')}${tab}`,
      '@@ -1 +1,2 @@',
      ' x',
      '+y',
      '',
    ].join('\n');
  };
  it('decodes every quoted form to the real name', () => {
    const diff = [
      modified('"a\\"b.txt"'),
      modified('"\\303\\251.txt"'),
      modified('sp ace.txt'),
      modified('"t\\tab.txt"'),
      modified('"new\\nline.txt"'),
      modified('"back\\\\slash.txt"'),
      'diff --git "a/\\303\\251.txt" "b/\\303\\274.txt"\nsimilarity index 100%\nrename from "\\303\\251.txt"\nrename to "\\303\\274.txt"\n',
      'diff --git a/sp ace b.png b/sp ace b.png\nnew file mode 100644\nindex 0000000..5555555\nGIT binary patch\nliteral 3\nKcmZQz00000\n\n',
      'diff --git a/plain.txt "b/\\"q\\".txt"\nsimilarity index 100%\nrename from plain.txt\nrename to "\\"q\\".txt"\n',
    ].join('');
    expect(parseUnifiedDiff(diff).map((f) => [f.path, f.status, f.additions])).toEqual([
      ['a"b.txt', 'modified', 1],
      ['é.txt', 'modified', 1],
      ['sp ace.txt', 'modified', 1],
      ['t\tab.txt', 'modified', 1],
      ['new\nline.txt', 'modified', 1],
      ['back\\slash.txt', 'modified', 1],
      ['ü.txt', 'renamed', 0],
      ['sp ace b.png', 'binary', 0],
      ['"q".txt', 'renamed', 0],
    ]);
  });

  it('reads a field as is when unquoted, dropping the prefix', () => {
    expect(gitPath('b/src/x.ts', 'b/')).toBe('src/x.ts');
    expect(gitPath('"b/\\346\\227\\245\\346\\234\\254.md"', 'b/')).toBe('日本.md');
  });
});
