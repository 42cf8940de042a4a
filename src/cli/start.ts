import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { processConfig } from '@core/config/env';
import { scripts } from '../../package.json';
import { CliError } from './cli-common';

type Role = 'all' | 'api' | 'worker';
const SCRIPT: Record<Role, keyof typeof scripts> = { all: 'start', api: 'start:api', worker: 'start:worker' };

/**
 * The node flags and entrypoint of an npm start script (`node <flags> dist/src/main….js`), so `hecate start` runs the
 * server exactly as `npm start` / `start:api` / `start:worker` do. The entrypoint is the one built beside this file.
 */
export function startCommand(role: Role): { flags: string[]; entry: string } {
  const script = scripts[SCRIPT[role]];
  const words = script
    .split('&&')
    .map((part) => part.trim().split(/\s+/))
    .find((w) => w[0] === 'node' && /(^|\/)main(\.[a-z]+)?\.js$/.test(w[w.length - 1]));
  if (!words) throw new Error(`package.json script ${SCRIPT[role]} runs no dist/src/main*.js`);
  return { flags: words.slice(1, -1), entry: resolve(__dirname, '..', basename(words[words.length - 1])) };
}

/** `hecate start`: runs the server entrypoint as a child, forwards SIGINT/SIGTERM/SIGHUP and exits with its code. */
export async function start(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { role: { type: 'string', default: 'all' } }, strict: true });
  const role = values.role as Role;
  if (!Object.hasOwn(SCRIPT, role)) throw CliError.usage(`--role must be all, api or worker (got "${role}")`);
  const config = processConfig();
  if (role !== 'all' && config.mode === 'embedded') {
    throw new CliError(
      'invalid_request',
      `--role ${role} runs one of the two processes of scaled mode, which needs DATABASE_URL and REDIS_URL`,
      'set DATABASE_URL and REDIS_URL, or run `hecate start` (api and worker in one process, embedded storage)',
    );
  }
  const { flags, entry } = startCommand(role);
  const child = spawn(process.execPath, [...flags, entry], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, forward(signal));
  return new Promise((resolveExit, reject) => {
    child.once('error', (err) => reject(new CliError('gateway_error', `could not start ${entry}: ${err.message}`)));
    child.once('exit', (code, signal) => resolveExit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
}
