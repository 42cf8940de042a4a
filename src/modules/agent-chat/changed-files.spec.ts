import { diffStatOf, parseUnifiedDiff } from './changed-files';

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
