import { AppConfigValues, loadConfig, RawEnv } from './config.loader';

/** The one place that reads process.env (docs/style.md rule 9). */
export function readProcessEnv(): RawEnv {
  return { ...process.env };
}

let cached: AppConfigValues | undefined;
export function processConfig(): AppConfigValues {
  cached ??= loadConfig(readProcessEnv());
  return cached;
}
