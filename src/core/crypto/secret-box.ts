import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';

const VERSION = 'v1:';

/**
 * The key secrets are stored under at rest (provider keys, literal MCP env/header values): SHA-256 of
 * GATEWAY_SECRET_KEY. Embedded mode generates one into `<GATEWAY_DATA_DIR>/secret.key` (mode 0600) when unset; scaled
 * mode without it has none (callers refuse to store secrets).
 */
export function resolveSecretKey(config: Pick<AppConfig, 'auth' | 'mode' | 'database'>): Buffer | undefined {
  const configured = config.auth.secretKey;
  if (configured) return createHash('sha256').update(configured).digest();
  if (config.mode !== 'embedded') return undefined;
  const dir = config.database.dataDir;
  const file = join(dir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      rootLogger().info({ file }, 'generated the secret key for secrets at rest');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  chmodSync(file, 0o600);
  return createHash('sha256').update(readFileSync(file, 'utf8').trim()).digest();
}

/** AES-256-GCM: `v1:` + base64(iv ‖ tag ‖ ciphertext). */
export function sealSecret(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return VERSION + Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
}

/** The plain text of `sealSecret`'s output, or undefined when it was sealed under another key (or is not sealed). */
export function openSecret(key: Buffer | undefined, sealed: string): string | undefined {
  if (!key || !sealed.startsWith(VERSION)) return undefined;
  try {
    const raw = Buffer.from(sealed.slice(VERSION.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
