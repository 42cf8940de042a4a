// No telemetry bootstrap here (docs/style.md rule 12 is for the server's processes): this is a thin HTTP client an editor
// launches per thread, its calls go through fetch (which the HTTP instrumentation does not see), and loading the
// OpenTelemetry SDK would add most of a second to every launch.
import pino from 'pino';
import { readProcessEnv } from '@core/config/env';
import { createRootLogger } from '@core/logging/logger';
import { acpConfig, AcpConfigError, serveAcp } from '@modules/acp';
import { version } from '../package.json';

/**
 * `npm run acp`: Hecate as an ACP agent on stdio, for editors (Zed, JetBrains, Neovim). stdout carries only ACP
 * frames; logs go to stderr. Exits 0 when the editor closes the connection, 1 on a bad configuration.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = acpConfig(readProcessEnv());
  } catch (err) {
    if (!(err instanceof AcpConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const log = createRootLogger(config.logLevel, 'hecate-acp', pino.destination(2));
  log.info({ base_url: config.baseUrl, model: config.model ?? '(gateway default)' }, 'ACP agent ready on stdio');
  await serveAcp(config, { input: process.stdin, output: process.stdout }, log, version);
  log.info('the editor closed the connection');
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`hecate acp: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
