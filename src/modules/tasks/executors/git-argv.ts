import { shellWords } from './shell-words';

/** `git_command` is a git command line with or without the leading `git`; it runs without a shell. */
export function gitArgv(command: string): string[] | null {
  const words = shellWords(command.trim());
  if (!words || words.length === 0) return null;
  const args = words[0] === 'git' ? words.slice(1) : words;
  return args.length > 0 ? ['git', ...args] : null;
}
