#!/usr/bin/env node
// No telemetry bootstrap here (docs/style.md rule 12 is for the server's processes): `start` runs a server entrypoint,
// which loads it itself, and the other commands are short-lived. Each command is loaded only when it runs, so `--help`
// and `doctor` never load Nest or the server's modules.
import { CliError, logToStderr, printError } from './cli/cli-common';

const USAGE = `Usage: hecate <command> [options]

Commands:
  start [--role all|api|worker]   start the server (all: api and worker in one process, the default;
                                  api and worker are the two processes of scaled mode)
  migrate                         apply pending migrations to the configured database (DATABASE_URL, or
                                  the embedded database in GATEWAY_DATA_DIR) and print what was applied
  doctor                          check Node, bubblewrap, Postgres, Redis, providers and the port; each
                                  failure says how to fix it (exit 1 when a check fails)
  keys create --tenant <id> [--name <name>] [--scopes inference,operator,admin] [--json]
                                  create an API key for a tenant and print its secret (shown once)

Configuration is read from the environment, as the server reads it (docs/configuration.md).
`;

type Command = (argv: string[]) => Promise<number>;

/** The commands, each loaded on demand. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./cli/start.js')).start,
  migrate: async () => (await import('./cli/migrate.js')).migrate,
  doctor: async () => (await import('./cli/doctor.js')).doctor,
  keys: async () => (await import('./cli/keys.js')).keys,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const load = name ? COMMANDS[name] : undefined;
  if (!load) {
    process.stderr.write(`${name ? `hecate: unknown command "${name}"\n\n` : ''}${USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  logToStderr();
  return (await load())(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const json = process.argv.includes('--json');
    const failure = CliError.from(err);
    printError(failure, json);
    process.exit(failure.usage ? 2 : 1);
  },
);
