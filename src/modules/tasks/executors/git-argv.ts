import { shellWords } from './shell-words';

/** `git_command` is a git command line with or without the leading `git`; it runs without a shell. */
export function gitArgv(command: string): string[] | null {
  const words = shellWords(command.trim());
  if (!words || words.length === 0) return null;
  const args = words[0] === 'git' ? words.slice(1) : words;
  return args.length > 0 ? ['git', ...args] : null;
}

/** Options before the subcommand that read configuration from the command line or move git out of the workspace. */
const REFUSED_GLOBAL: Array<[RegExp, string]> = [
  [/^-c/, '-c'],
  [/^--config-env(=|$)/, '--config-env'],
  [/^-C/, '-C'],
  [/^--exec-path(=|$)/, '--exec-path'],
  [/^--git-dir(=|$)/, '--git-dir'],
  [/^--work-tree(=|$)/, '--work-tree'],
];
/** Subcommand options that run another program (or, for clone, write configuration that does). */
const REFUSED_ANYWHERE: Array<[RegExp, string]> = [
  [/^--upload-pack(=|$)/, '--upload-pack'],
  [/^--receive-pack(=|$)/, '--receive-pack'],
  [/^--exec(=|$)/, '--exec'],
  [/^--extcmd(=|$)/, '--extcmd'],
  [/^--template(=|$)/, '--template'],
];
const REFUSED_SHORT: Record<string, string[]> = {
  clone: ['-u', '-c', '--config', '--tool'],
  'ls-remote': ['-u'],
  fetch: ['-u'],
  pull: ['-u'],
  archive: ['-u'],
  rebase: ['-x'],
  difftool: ['-x', '-t', '--tool'],
  mergetool: ['-t', '--tool'],
};
/** Subcommands whose purpose is to run other commands. */
const REFUSED_SUBCOMMANDS: Record<string, string> = {
  'filter-branch': 'git filter-branch runs arbitrary commands',
  'filter-repo': 'git filter-repo runs arbitrary commands',
};

const optionProblem = (o: string): string => `git_command: option ${o} is not allowed (it can run another program or take configuration from the command)`;

/**
 * Why this git argv is refused (null when it is allowed). A git task is approved as a git command (git_exec), so
 * nothing in it may turn it into an arbitrary one: `-c alias.x=!cmd`, `-c core.fsmonitor=cmd`, `--upload-pack=cmd`,
 * `--receive-pack`, `--exec`, `-C`, and the subcommands that exist to run commands.
 */
export function gitArgvProblem(argv: string[]): string | null {
  const args = argv.slice(1);
  const subIndex = args.findIndex((a) => !a.startsWith('-'));
  const globals = subIndex < 0 ? args : args.slice(0, subIndex);
  for (const arg of globals) {
    const refused = REFUSED_GLOBAL.find(([re]) => re.test(arg));
    if (refused) return optionProblem(refused[1]);
  }
  if (subIndex < 0) return null;
  const sub = args[subIndex];
  if (REFUSED_SUBCOMMANDS[sub]) return `git_command: ${REFUSED_SUBCOMMANDS[sub]}; use a shell task`;
  const rest = args.slice(subIndex + 1);
  if (sub === 'submodule' && rest.includes('foreach')) return 'git_command: git submodule foreach runs arbitrary commands; use a shell task';
  if (sub === 'bisect' && rest[0] === 'run') return 'git_command: git bisect run runs arbitrary commands; use a shell task';
  for (const arg of rest) {
    if (arg === '--') break;
    const refused = REFUSED_ANYWHERE.find(([re]) => re.test(arg));
    if (refused) return optionProblem(refused[1]);
    const short = (REFUSED_SHORT[sub] ?? []).find((o) => arg === o || arg.startsWith(o.startsWith('--') ? `${o}=` : o));
    if (short) return `git_command: option ${short} of git ${sub} is not allowed (it runs another program or writes configuration that does)`;
  }
  return null;
}

/**
 * The environment every git process gets: no prompts or pager, system and global configuration ignored, only
 * plain transports (no `ext::`), and any directory trusted (workspaces belong to the sandbox's uid, not root).
 */
export const GIT_ENV: Record<string, string> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  GIT_EDITOR: 'true',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
  GIT_CONFIG_COUNT: '2',
  GIT_CONFIG_KEY_0: 'safe.directory',
  GIT_CONFIG_VALUE_0: '*',
  GIT_CONFIG_KEY_1: 'core.fsmonitor',
  GIT_CONFIG_VALUE_1: 'false',
};
