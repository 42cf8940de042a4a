import { gitArgv, gitArgvProblem } from './git-argv';

const problem = (command: string) => gitArgvProblem(gitArgv(command)!);

describe('gitArgvProblem', () => {
  it.each(['status', 'log -C --format=%s', 'diff -c HEAD', 'clone https://example.com/x.git dir', 'commit -m "-c is fine in a message"', 'log -- -C'])(
    'allows `git %s`',
    (command) => expect(problem(command)).toBeNull(),
  );

  it.each([
    ['-c alias.x=!sh x', '-c'],
    ['-calias.x=!sh x', '-c'],
    ['--config-env=core.editor=E commit', '--config-env'],
    ['-C /etc status', '-C'],
    ['--git-dir=/srv/other.git log', '--git-dir'],
    ['--exec-path=/tmp status', '--exec-path'],
    ['fetch --upload-pack=evil origin', '--upload-pack'],
    ['push --receive-pack evil origin', '--receive-pack'],
    ['clone --config core.sshCommand=evil ssh://h/x', '--config'],
    ['clone --template=/tmp/hooks https://h/x', '--template'],
    ['difftool --extcmd=evil', '--extcmd'],
    ['mergetool --tool=evil', '--tool'],
    ['filter-branch --tree-filter evil', 'filter-branch'],
  ])('refuses `git %s`', (command, named) => expect(problem(command)).toContain(named));
});
