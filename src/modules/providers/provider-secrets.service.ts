import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { SecretKeyMissingError } from './providers.errors';

const VERSION = 'v1:';

/**
 * Provider keys at rest: AES-256-GCM with a key derived (SHA-256) from GATEWAY_SECRET_KEY. Embedded mode
 * generates one into `<GATEWAY_DATA_DIR>/secret.key` (mode 0600) when unset; scaled mode without it refuses to
 * store keys (env-seeded keys still work: they live in memory only).
 */
@Injectable()
export class ProviderSecretsService {
  private readonly key: Buffer | undefined;

  constructor(config: AppConfig) {
    this.key = ProviderSecretsService.resolveKey(config);
  }

  private static resolveKey(config: AppConfig): Buffer | undefined {
    const configured = config.auth.secretKey;
    if (configured) return createHash('sha256').update(configured).digest();
    if (config.mode !== 'embedded') return undefined;
    const dir = config.database.dataDir;
    const file = join(dir, 'secret.key');
    if (!existsSync(file)) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      rootLogger().info({ file }, 'generated provider secret key');
    }
    chmodSync(file, 0o600);
    return createHash('sha256').update(readFileSync(file, 'utf8').trim()).digest();
  }

  get canStore(): boolean {
    return this.key !== undefined;
  }

  encrypt(plain: string): string {
    if (!this.key) throw new SecretKeyMissingError();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return VERSION + Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
  }

  /** Returns undefined (and logs) when the ciphertext cannot be read with this process's key. */
  decrypt(ciphertext: string, provider: string): string | undefined {
    if (!this.key || !ciphertext.startsWith(VERSION)) return undefined;
    try {
      const raw = Buffer.from(ciphertext.slice(VERSION.length), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      rootLogger().warn({ provider }, 'stored provider key cannot be decrypted with GATEWAY_SECRET_KEY; treating it as missing');
      return undefined;
    }
  }
}
