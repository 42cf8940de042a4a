import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { builtEntry, childEnv } from './server-process';

const ROOT = resolve(__dirname, '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  proc: ChildProcess;
  /** Everything printed on stdout and stderr so far. */
  output(): string;
  exited: Promise<CliResult>;
}

/**
 * Starts the built `hecate` CLI (`dist/src/cli.js`, what the package's `bin` runs) from the repository root, with the
 * environment a server of the suite gets (`childEnv`) plus `env`.
 */
export function spawnCli(args: string[], env: Record<string, string | undefined> = {}): CliProcess {
  const proc = spawn(process.execPath, [builtEntry('cli.js'), ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<CliResult>((res) => proc.once('close', (code) => res({ code, stdout, stderr })));
  return { proc, output: () => stdout + stderr, exited };
}

/** Runs one CLI command to completion (killed after `timeoutMs`). */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 60_000): Promise<CliResult> {
  const cli = spawnCli(args, env);
  const timer = setTimeout(() => cli.proc.kill('SIGKILL'), timeoutMs);
  try {
    return await cli.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** The `ok|warn|fail  <check>  <detail>` lines of `hecate doctor`, by check name (its fix, when printed, beside it). */
export function doctorLines(stdout: string): Map<string, { status: string; detail: string; fix?: string }> {
  const lines = new Map<string, { status: string; detail: string; fix?: string }>();
  let last: { status: string; detail: string; fix?: string } | undefined;
  for (const line of stdout.split('\n')) {
    const check = /^(ok|warn|fail)\s+(\S+)\s+(.*)$/.exec(line);
    const fix = /^\s+fix: (.*)$/.exec(line);
    if (check) lines.set(check[2], (last = { status: check[1], detail: check[3] }));
    else if (fix && last) last.fix = fix[1];
  }
  return lines;
}
