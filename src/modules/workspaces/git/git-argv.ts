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
  [/^--ext-diff$/, '--ext-diff'],
  [/^--open-files-in-pager(=|$)/, '--open-files-in-pager'],
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
  grep: ['-O'],
};
/** Subcommands whose purpose is to run other commands. */
const REFUSED_SUBCOMMANDS: Record<string, string> = {
  'filter-branch': 'git filter-branch runs arbitrary commands',
  'filter-repo': 'git filter-repo runs arbitrary commands',
};

/**
 * The git commands git_exec runs: built-ins only. A name outside this list is an alias (its `!cmd` form runs a
 * shell) or a `git-<name>` program on PATH; also left out are the built-ins that exist to run other programs or
 * reach outside the workspace (credential, daemon, difftool, mergetool, help -w, instaweb, maintenance start,
 * send-email, upload-pack…).
 */
const GIT_SUBCOMMANDS = new Set(
  (
    'add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore check-mailmap check-ref-format ' +
    'checkout checkout-index cherry cherry-pick clean clone commit commit-graph commit-tree config count-objects describe diff ' +
    'diff-files diff-index diff-tree fetch fmt-merge-msg for-each-ref format-patch fsck gc grep hash-object index-pack init ' +
    'interpret-trailers log ls-files ls-remote ls-tree mailinfo mailsplit merge merge-base merge-file merge-index merge-tree mktag mktree mv ' +
    'name-rev notes pack-objects pack-refs prune pull push range-diff read-tree rebase reflog remote repack replace rerere reset ' +
    'restore rev-list rev-parse revert rm shortlog show show-branch show-ref sparse-checkout stash status stripspace submodule ' +
    'switch symbolic-ref tag unpack-objects update-index update-ref var verify-commit verify-pack verify-tag version whatchanged ' +
    'worktree write-tree'
  ).split(' '),
);

/**
 * Configuration keys a git_exec `config` may not write (matched lower-case): every key that names a program git runs
 * (aliases, hooks, fsmonitor, editors, pagers, ssh/proxy/askpass commands, diff/merge/filter drivers, credential
 * helpers, tools, browsers, tar filters, interactive filters), that pulls in other configuration (include, includeIf),
 * that opens transports (protocol.*, url.*.insteadOf, remote helpers) or that writes outside the repository (trace2).
 */
const REFUSED_CONFIG_KEYS: RegExp[] = [
  /^alias\./,
  /^core\.(fsmonitor|hookspath|pager|editor|askpass|gitproxy|attributesfile|worktree|.*command)$/,
  /^(sequence|pager|include|includeif|filter|credential[a-z]*|protocol|url|gpg|ssh|hook|uploadpack|uploadarchive|receive|web|browser|instaweb|sendemail|imap|submodule|difftool|mergetool|guitool|man|help|tar|interactive|trace2|safe|init)\./,
  /^diff\.(external|tool|guitool|.+\.(command|textconv))$/,
  /^merge\.(tool|guitool|.+\.driver)$/,
  /^remote\..+\.(uploadpack|receivepack|vcs)$/,
  /^(commit|tag|push)\.gpgsign$/,
];

/** `git config` options that read or write another file, or open an editor. */
const REFUSED_CONFIG_OPTIONS = /^(-f|--file|--blob|--global|--system|-e|--edit|--rename-section|--includes)(=|$)/;
/** `git config` options that take the next word as their value. */
const CONFIG_OPTIONS_WITH_VALUE = new Set(['--type', '--default', '--comment', '--value']);
const CONFIG_READS = /^(--get|--get-all|--get-regexp|--get-urlmatch|--get-color|--get-colorbool|--list|-l|--name-only|--show-origin|--show-scope)$/;

/** Why a `git config …` (its arguments after `config`) is refused: a write of a key that runs a program, and the like. */
function configProblem(rest: string[]): string | null {
  const words: string[] = [];
  let reads = false;
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i];
    if (REFUSED_CONFIG_OPTIONS.test(arg))
      return `git_command: git config ${arg.split('=')[0]} is not allowed (only the repository's own configuration, by key)`;
    if (CONFIG_READS.test(arg)) reads = true;
    else if (CONFIG_OPTIONS_WITH_VALUE.has(arg)) i += 1;
    else if (!arg.startsWith('-') || arg === '-') words.push(arg);
  }
  if (['edit', 'rename-section'].includes(words[0] ?? '')) return `git_command: git config ${words[0]} is not allowed`;
  if (['get', 'list'].includes(words[0] ?? '')) reads = true;
  if (reads) return null;
  const key = (['set', 'unset', 'remove-section'].includes(words[0] ?? '') ? words[1] : words[0]) ?? '';
  const lower = key.toLowerCase();
  if (REFUSED_CONFIG_KEYS.some((re) => re.test(lower)))
    return `git_command: git config may not write ${key} (it makes git run a program, read other configuration or open a transport); use a shell task`;
  return null;
}

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
  if (!GIT_SUBCOMMANDS.has(sub))
    return `git_command: git ${sub} is not a git command git_exec runs (aliases, git-* programs and commands that run other programs are refused); use a shell task`;
  if (sub === 'config') return configProblem(rest);
  return null;
}

/**
 * The environment every git process gets: no prompts or pager, system and global configuration ignored, only
 * plain transports (no `ext::`), and any directory trusted (workspaces belong to the sandbox's uid, not root; git
 * 2.39 ignores that setting here, so the clone of a local repository gets it from a global file of its own:
 * workspace.service.ts). Whatever the repository's own configuration says (it is workspace content), git runs no hook, fsmonitor, credential helper,
 * askpass, proxy or configured ssh command, and does not take a directory that merely looks like a bare repository.
 */
export const GIT_ENV: Record<string, string> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  GIT_EDITOR: 'true',
  GIT_SEQUENCE_EDITOR: 'true',
  GIT_ASKPASS: 'false',
  GIT_PROXY_COMMAND: '',
  GIT_SSH_COMMAND: 'ssh -F /dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
  GIT_CONFIG_COUNT: '5',
  GIT_CONFIG_KEY_0: 'safe.directory',
  GIT_CONFIG_VALUE_0: '*',
  GIT_CONFIG_KEY_1: 'core.fsmonitor',
  GIT_CONFIG_VALUE_1: 'false',
  GIT_CONFIG_KEY_2: 'core.hooksPath',
  GIT_CONFIG_VALUE_2: '/dev/null',
  GIT_CONFIG_KEY_3: 'credential.helper',
  GIT_CONFIG_VALUE_3: '',
  GIT_CONFIG_KEY_4: 'safe.bareRepository',
  GIT_CONFIG_VALUE_4: 'explicit',
};
