import { parseArgs } from 'node:util';
import { ConfigValidationError, type AppConfigValues } from '@core/config/config.loader';
import { processConfig } from '@core/config/env';
import { scrubSecrets } from '@core/logging/logger';
import { checkConfigWarnings, checkNode, checkPort, checkSandbox, checkStorage, type CheckResult } from './doctor-host';
import { checkPostgres, checkProviders, checkRedis } from './doctor-services';

/** Every check the configuration calls for; the network ones run at once (each has its own timeout). */
async function runChecks(config: AppConfigValues): Promise<CheckResult[]> {
  const warnings = checkConfigWarnings(config);
  const network = await Promise.all([
    config.database.url ? checkPostgres(config) : [],
    config.redis.url ? checkRedis(config) : [],
    checkProviders(config),
    checkPort(config).then((r) => [r]),
  ]);
  return [checkStorage(config), ...(warnings ? [warnings] : []), checkSandbox(config), ...network.flat()];
}

function print(result: CheckResult, width: number): void {
  const line = `${result.status.padEnd(4)}  ${result.check.padEnd(width)}  ${result.detail}`;
  const fix = result.status !== 'ok' && result.fix ? `\n${' '.repeat(6)}fix: ${result.fix}` : '';
  // Every value shown went through redactUrl already; this is the net under it (DSN passwords, bearer tokens, keys).
  process.stdout.write(`${scrubSecrets(line + fix)}\n`);
}

/**
 * `hecate doctor`: one line per check, `ok|warn|fail  <check>  <detail>`, and under a warning or failure the fix.
 * Exit 0 when nothing failed, 1 otherwise. Configuration is read as the server reads it.
 */
export async function doctor(argv: string[]): Promise<number> {
  parseArgs({ args: argv, options: {}, strict: true });
  const results: CheckResult[] = [checkNode()];
  try {
    results.push(...(await runChecks(processConfig())));
  } catch (err) {
    if (!(err instanceof ConfigValidationError)) throw err;
    results.push({ status: 'fail', check: 'config', detail: err.problems.join('; '), fix: 'fix the variables named (docs/configuration.md)' });
  }
  const width = Math.max(...results.map((r) => r.check.length));
  for (const result of results) print(result, width);
  const failed = results.filter((r) => r.status === 'fail').length;
  const warned = results.filter((r) => r.status === 'warn').length;
  process.stdout.write(failed ? `\n${failed} check(s) failed\n` : `\nno failures${warned ? ` (${warned} warning(s))` : ''}\n`);
  return failed ? 1 : 0;
}
