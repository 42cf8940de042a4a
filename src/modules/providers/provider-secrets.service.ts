import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { openSecret, resolveSecretKey, sealSecret } from '@core/crypto/secret-box';
import { rootLogger } from '@core/logging/logger';
import { SecretKeyMissingError } from './providers.errors';

/**
 * Provider keys at rest: AES-256-GCM with a key derived (SHA-256) from GATEWAY_SECRET_KEY (core/crypto, shared with
 * the literal MCP env/header values of tasks). Embedded mode generates one into `<GATEWAY_DATA_DIR>/secret.key`
 * (mode 0600) when unset; scaled mode without it refuses to store keys (env-seeded keys still work: they live in
 * memory only).
 */
@Injectable()
export class ProviderSecretsService {
  private readonly key: Buffer | undefined;

  constructor(config: AppConfig) {
    this.key = resolveSecretKey(config);
  }

  get canStore(): boolean {
    return this.key !== undefined;
  }

  encrypt(plain: string): string {
    if (!this.key) throw new SecretKeyMissingError();
    return sealSecret(this.key, plain);
  }

  /** Returns undefined (and logs) when the ciphertext cannot be read with this process's key. */
  decrypt(ciphertext: string, provider: string): string | undefined {
    if (!this.key || !ciphertext.startsWith('v1:')) return undefined;
    const plain = openSecret(this.key, ciphertext);
    if (plain === undefined) rootLogger().warn({ provider }, 'stored provider key cannot be decrypted with GATEWAY_SECRET_KEY; treating it as missing');
    return plain;
  }
}
