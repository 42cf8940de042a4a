import { gitArgv } from './git-argv';
import { shellWords } from './shell-words';
import { unifiedDiff } from './unified-diff';

describe('shellWords / gitArgv', () => {
  it('splits words with quotes and escapes, without expansion', () => {
    expect(shellWords(`commit -m "a b" --author='x y' c\\ d $HOME`)).toEqual(['commit', '-m', 'a b', '--author=x y', 'c d', '$HOME']);
    expect(shellWords('unterminated "quote')).toBeNull();
  });

  it('accepts a git command line with or without the leading git', () => {
    expect(gitArgv('git status --short')).toEqual(['git', 'status', '--short']);
    expect(gitArgv('log -1 --format=%H')).toEqual(['git', 'log', '-1', '--format=%H']);
    expect(gitArgv('git')).toBeNull();
    expect(gitArgv('  ')).toBeNull();
  });
});

describe('unifiedDiff', () => {
  it('renders a new file, a deletion and a change with context', () => {
    expect(unifiedDiff('a.txt', null, 'x\ny\n')).toBe('--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n');
    expect(unifiedDiff('a.txt', 'x\n', null)).toBe('--- a/a.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n');
    const before = ['1', '2', '3', '4', '5', '6', '7', '8'].join('\n') + '\n';
    const after = ['1', '2', '3', '4', 'five', '6', '7', '8'].join('\n') + '\n';
    expect(unifiedDiff('n.txt', before, after)).toBe('--- a/n.txt\n+++ b/n.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n');
  });
});
