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
    ['config alias.x "!touch pwned"', 'alias.x'],
    ['x', 'git x'],
    ['lfs install', 'git lfs'],
    ['credential fill', 'git credential'],
    ['config --file .git/config alias.x !sh', '--file'],
    ['config core.hooksPath scripts', 'core.hooksPath'],
    ['config set --append include.path evil.cfg', 'include.path'],
    ['grep -Oevil x', '-O'],
    ['diff --ext-diff', '--ext-diff'],
  ])('refuses `git %s`', (command, named) => expect(problem(command)).toContain(named));

  it.each([
    'config user.name Bot',
    'config --get alias.x',
    'config --list',
    'config --unset user.email',
    'config get core.pager',
    'remote add origin https://h/x.git',
  ])('allows `git %s`', (command) => expect(problem(command)).toBeNull());
});
