import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { declaredVariables } from '@core/config/config-warnings';
import { AgentEnv } from '@core/config/groups/agent.env';
import { ChatEnv } from '@core/config/groups/chat.env';
import { GatewayEnv } from '@core/config/groups/gateway.env';
import { McpEnv } from '@core/config/groups/mcp.env';
import { PlatformEnv } from '@core/config/groups/platform.env';
import { SandboxLimitsEnv } from '@core/config/groups/sandbox-limits.env';
import { TasksEnv } from '@core/config/groups/tasks.env';
import { where, type DocBlock } from '../../support/doc-blocks';

/**
 * The `check` doc tests: a block that cannot run here (it installs, builds, packs or needs other hosts) is held to
 * what it names — every npm script, file, environment variable and program must exist — so a renamed script or
 * variable fails here instead of in a reader's shell.
 */
export const ROOT = resolve(__dirname, '../../..');

const scriptsOf = (dir: string): Record<string, string> =>
  (JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};

/** npm's own commands a block may use (anything else must be a script of the package it runs in). */
const NPM_BUILTINS = new Set(['install', 'ci', 'pack']);

/** Environment variables a reader may set: the server's (its validated schema) and the test suite's (test/setup/env.ts). */
function knownVariables(): Set<string> {
  const server = declaredVariables([PlatformEnv, GatewayEnv, ChatEnv, TasksEnv, AgentEnv, SandboxLimitsEnv, McpEnv]);
  const tests = [...readFileSync(join(ROOT, 'test/setup/env.ts'), 'utf8').matchAll(/process\.env\.([A-Z0-9_]+)/g)].map((m) => m[1]);
  return new Set([...server, ...tests]);
}

const onPath = (program: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** One simple command of a shell line: `cd`, `export`, leading `VAR=value` words, the program and its arguments. */
function simpleCommands(code: string): string[][] {
  return code
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '')) // comments
    .flatMap((line) => line.split(/&&|\|\||;|\||\$\(|[()]/))
    .map((part) => part.trim().split(/\s+/).filter(Boolean))
    .filter((words) => words.length > 0);
}

/** What is wrong with a `check commands` block: scripts, files, variables or programs that do not exist. */
export function commandProblems(block: DocBlock): string[] {
  const known = knownVariables();
  const problems: string[] = [];
  let dir = '.';
  for (const words of simpleCommands(block.code)) {
    const assigned = words[0] === 'export' ? words.slice(1) : words.filter((w, i) => words.slice(0, i + 1).every((x) => /^[A-Z][A-Z0-9_]*=/.test(x)));
    for (const w of assigned) {
      const name = /^([A-Z][A-Z0-9_]*)=/.exec(w)?.[1];
      if (name && !known.has(name)) problems.push(`${name} is not a variable the server or the test suite reads`);
    }
    const [program, ...args] = words.slice(words[0] === 'export' ? words.length : assigned.length);
    if (!program) continue;
    if (program === 'cd') dir = args[0] ?? '.';
    else if (program === 'npm') {
      const script = args[0] === 'run' ? args[1] : args[0];
      const isScript = args[0] === 'run' || args[0] === 'start' || args[0] === 'test';
      if (isScript && !(script in scriptsOf(dir))) problems.push(`npm ${args.join(' ')}: ${join(dir, 'package.json')} has no script "${script}"`);
      if (!isScript && !NPM_BUILTINS.has(script)) problems.push(`npm ${script}: not an npm command the doc tests know`);
    } else if (program === 'node') {
      if (!existsSync(resolve(ROOT, dir, args[0]))) problems.push(`node ${args[0]}: no such file (after npm run build)`);
    } else if (!onPath(program)) problems.push(`${program}: not installed here`);
  }
  return problems.map((p) => `${where(block)}: ${p}`);
}

/** What is wrong with a `check paths` block (a diagram): source files it names that do not exist. */
export function pathProblems(block: DocBlock): string[] {
  const names = [...block.code.matchAll(/\b[\w./-]+\.(?:ts|js|json|md)\b/g)].map((m) => m[0]);
  if (names.length === 0) return [`${where(block)}: names no file to check`];
  const found = (name: string) => [ROOT, join(ROOT, 'src')].some((d) => existsSync(join(d, name)));
  return names.filter((n) => !found(n)).map((n) => `${where(block)}: ${n} does not exist (in the repository or src/)`);
}
