import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
/** Environment variables as read (values may be missing). */
type RawEnv = Record<string, string | undefined>;

/** Variables that may be given as a file (`<NAME>_FILE`, as Kubernetes mounts secrets). */
const SECRET_NAMES = new Set(['GATEWAY_AUTH_TOKEN', 'GATEWAY_SECRET_KEY', 'DATABASE_URL', 'REDIS_URL']);
export const isSecretName = (name: string): boolean => SECRET_NAMES.has(name) || /^PROVIDER_[A-Z0-9_]+_API_KEY$/.test(name);

export interface SecretFiles {
  /** The environment with every `<NAME>_FILE` read into `<NAME>`. */
  env: RawEnv;
  /** Absolute paths of the files read (hidden from task subprocesses). */
  files: string[];
  problems: string[];
}

/**
 * `<NAME>_FILE=/path` sets `<NAME>` to the file's content (one trailing newline removed) for the secret
 * variables (the operator token, the secret key, DATABASE_URL, REDIS_URL, PROVIDER_<NAME>_API_KEY). Setting both
 * `<NAME>` and `<NAME>_FILE`, or a file that cannot be read, is a configuration error naming the variable.
 */
export function readSecretFiles(raw: RawEnv): SecretFiles {
  const env: RawEnv = { ...raw };
  const files: string[] = [];
  const problems: string[] = [];
  for (const [key, path] of Object.entries(raw)) {
    if (!key.endsWith('_FILE') || !path) continue;
    const name = key.slice(0, -'_FILE'.length);
    if (!isSecretName(name)) continue;
    if (raw[name]) {
      problems.push(`${key}: ${name} is set as well; set one of them`);
      continue;
    }
    const absolute = resolve(path);
    try {
      env[name] = readFileSync(absolute, 'utf8').replace(/\r?\n$/, '');
      files.push(absolute);
    } catch (err) {
      problems.push(`${key}: cannot read ${absolute} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    delete env[key];
  }
  return { env, files, problems };
}
