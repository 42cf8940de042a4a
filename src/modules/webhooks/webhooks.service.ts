import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import type { Principal } from '@core/context/request-context';
import { resolveSecretKey, sealSecret } from '@core/crypto/secret-box';
import { decodePageCursor, encodePageCursor, keysetPage } from '@core/http/page-cursor';
import { checkOutboundUrl } from '@core/net/outbound-url-policy';
import { type CreateWebhookDto, type ListWebhooksQueryDto, type PatchWebhookDto, toDeliveryResponse, toWebhookResponse } from './webhooks.dto';
import { DeliveryNotFoundError, InvalidWebhookError, WebhookNotFoundError, WebhookSecretKeyMissingError } from './webhooks.errors';
import { WebhooksRepository } from './webhooks.repository';
import { newWebhookSecret } from './webhook-signature';

const DEFAULT_LIMIT = 50;

/**
 * Webhooks (docs/webhooks.md): tenant-scoped subscriptions to the public feed. This is the API's half; WebhookDispatcher
 * (workers) delivers. The URL passes the outbound policy when it is set and again at every attempt; the signing secret is
 * shown once and stored sealed.
 */
@Injectable()
export class WebhooksService {
  private readonly secretKey: Buffer | undefined;

  constructor(
    private readonly repo: WebhooksRepository,
    private readonly config: AppConfig,
  ) {
    this.secretKey = resolveSecretKey(config);
  }

  async create(p: Principal, dto: CreateWebhookDto) {
    await this.checkUrl(dto.url);
    const key = this.secretKey;
    if (!key) throw new WebhookSecretKeyMissingError();
    const secret = newWebhookSecret();
    const id = `wh_${randomBytes(12).toString('hex')}`;
    await this.repo.insert({
      id,
      tenant_id: p.tenantId,
      url: dto.url,
      event_types: dto.event_types,
      description: dto.description ?? '',
      secret: sealSecret(key, secret),
      created_by: p.apiKeyId ? `api_key:${p.apiKeyId}` : p.kind,
    });
    return { ...(await this.get(p.tenantId, id)), secret };
  }

  async update(tenantId: string, id: string, dto: PatchWebhookDto) {
    if (dto.url !== undefined) await this.checkUrl(dto.url);
    if (!(await this.repo.update(tenantId, id, dto))) throw new WebhookNotFoundError(id);
    return this.get(tenantId, id);
  }

  async get(tenantId: string, id: string) {
    const row = await this.repo.find(tenantId, id);
    if (!row) throw new WebhookNotFoundError(id);
    return toWebhookResponse(row);
  }

  async list(tenantId: string, q: ListWebhooksQueryDto) {
    const limit = q.limit ?? DEFAULT_LIMIT;
    const rows = await this.repo.list(tenantId, limit + 1, decodePageCursor(q.cursor));
    return keysetPage(rows, limit, toWebhookResponse, (last) => encodePageCursor(last.created_at, last.id));
  }

  async delete(tenantId: string, id: string) {
    if (!(await this.repo.delete(tenantId, id))) throw new WebhookNotFoundError(id);
    return { id, deleted: true };
  }

  async deliveries(tenantId: string, id: string, q: ListWebhooksQueryDto) {
    await this.get(tenantId, id);
    const limit = q.limit ?? DEFAULT_LIMIT;
    const rows = await this.repo.deliveries(tenantId, id, limit + 1, decodePageCursor(q.cursor));
    return keysetPage(rows, limit, toDeliveryResponse, (last) => encodePageCursor(last.created_at, last.id));
  }

  /** Sends a delivery again (same `webhook-id`), in its feed position among the webhook's pending ones. */
  async redeliver(tenantId: string, id: string, deliveryId: string) {
    await this.get(tenantId, id);
    const row = await this.repo.redeliver(tenantId, id, deliveryId);
    if (!row) throw new DeliveryNotFoundError(id, deliveryId);
    return toDeliveryResponse(row);
  }

  /** The outbound policy now (and the dispatcher again at every attempt, on the address it connects to). */
  private async checkUrl(url: string): Promise<void> {
    const { allowPrivate } = this.config.tasks.webhooks;
    const verdict = await checkOutboundUrl(url, { allowPrivate, allowedHosts: [], selfPort: this.config.server.port });
    if (!verdict.ok)
      throw new InvalidWebhookError([`url: ${verdict.message.replace('GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS', 'GATEWAY_WEBHOOK_ALLOW_PRIVATE_IPS')}`]);
  }
}
