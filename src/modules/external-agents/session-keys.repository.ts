import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { busChannels, EventBus } from '@core/bus';
import { execSql } from '@core/database/sql';
import { newApiKeySecret } from '@core/http/auth/api-key.service';
import { ignoreFailure } from '@core/logging/ignore-failure';

/**
 * The API key an External Agent session's adapter uses against this gateway (metered adapters): scope
 * `inference`, the session's tenant, minted by the worker starting the adapter — the secret lives only in that
 * process's environment — and revoked when the process ends or the session closes (any earlier key of the session
 * is revoked when a new one is minted). Revocations are broadcast so no api process keeps a cached principal.
 */
@Injectable()
export class SessionKeysRepository {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async mint(tenantId: string, sessionId: string): Promise<{ id: string; secret: string }> {
    await this.revokeAll(sessionId);
    const { prefix, secret, hash } = newApiKeySecret();
    const id = randomUUID();
    await execSql(
      this.dataSource.manager,
      `INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, scopes, created_at, agent_chat_session_id)
       VALUES ($1, $2, $3, $4, $5, ARRAY['inference'], now(), $6)`,
      [id, tenantId, `agent-chat session ${sessionId}`, prefix, hash, sessionId],
    );
    return { id, secret };
  }

  /** Every live key of the session (close, delete, a new mint). */
  revokeAll(sessionId: string): Promise<number> {
    return this.revokeWhere(`agent_chat_session_id = $1`, [sessionId]);
  }

  /** One key (its adapter process ended). */
  revoke(keyId: string): Promise<number> {
    return this.revokeWhere(`id = $1 AND agent_chat_session_id IS NOT NULL`, [keyId]);
  }

  /**
   * Keys whose adapter is gone without saying so (its worker was killed): the session has no live adapter lease. A key
   * younger than `graceMs` is left alone (it is minted right after the lease is claimed).
   */
  revokeOrphans(graceMs: number): Promise<number> {
    return this.revokeWhere(
      `agent_chat_session_id IS NOT NULL AND created_at < now() - $1::bigint * interval '1 millisecond'
        AND NOT EXISTS (SELECT 1 FROM agent_chat_sessions s
                         WHERE s.id = api_keys.agent_chat_session_id AND s.adapter_token IS NOT NULL AND s.adapter_lease_expires_at > now())`,
      [graceMs],
    );
  }

  private async revokeWhere(where: string, params: unknown[]): Promise<number> {
    const { rows } = await execSql<{ prefix: string }>(
      this.dataSource.manager,
      `UPDATE api_keys SET revoked_at = now() WHERE revoked_at IS NULL AND ${where} RETURNING prefix`,
      params,
    );
    for (const r of rows)
      await this.bus
        .send(busChannels.apiKeyRevoked, { prefix: r.prefix })
        .catch(ignoreFailure('api key revocation broadcast', 'the key is revoked in Postgres; the broadcast only drops cached copies sooner'));
    return rows.length;
  }
}
