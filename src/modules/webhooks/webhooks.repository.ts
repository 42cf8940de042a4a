import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { execSql, pruneByAgeAndCount } from '@core/database/sql';

export type WebhookStatus = 'enabled' | 'disabled';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookRow {
  id: string;
  tenant_id: string;
  url: string;
  event_types: string[];
  description: string;
  /** Sealed with the server's secret key. */
  secret: string;
  status: WebhookStatus;
  disabled_reason: string | null;
  failure_streak: number;
  feed_cursor: string;
  claim_token: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  tenant_id: string;
  event_id: string;
  event_type: string;
  feed_cursor: string;
  payload: Record<string, unknown>;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  last_response: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export interface NewDelivery {
  id: string;
  eventId: string;
  eventType: string;
  feedCursor: number;
  payload: Record<string, unknown>;
}

/** A claim on a webhook: the worker delivering its events (one at a time, in feed order) until `leaseSeconds` pass. */
export interface WebhookClaim {
  owner: string;
  token: string;
  leaseSeconds: number;
}

const DELIVERY_COLUMNS =
  'id, webhook_id, tenant_id, event_id, event_type, feed_cursor, payload, status, attempts, next_attempt_at, last_status_code, last_error, last_response, created_at, delivered_at';

/** Webhooks and their deliveries. API reads are scoped by tenant; the dispatcher's writes hold the webhook's claim. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A new webhook, reading the feed from its head now (it receives what happens after it was made). */
  async insert(row: Pick<WebhookRow, 'id' | 'tenant_id' | 'url' | 'event_types' | 'description' | 'secret' | 'created_by'>): Promise<void> {
    await execSql(
      this.dataSource.manager,
      `INSERT INTO webhooks (id, tenant_id, url, event_types, description, secret, created_by, feed_cursor)
       VALUES ($1, $2, $3, $4, $5, $6, $7, COALESCE((SELECT last_cursor FROM event_feed_head WHERE id = 1), 0))`,
      [row.id, row.tenant_id, row.url, row.event_types, row.description, row.secret, row.created_by],
    );
  }

  async find(tenantId: string, id: string): Promise<WebhookRow | null> {
    const { rows } = await execSql<WebhookRow>(this.dataSource.manager, `SELECT * FROM webhooks WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return rows[0] ?? null;
  }

  /** The API's changes; re-enabling clears the reason and the failure streak. */
  async update(tenantId: string, id: string, set: { url?: string; event_types?: string[]; description?: string; enabled?: boolean }): Promise<boolean> {
    const { affected } = await execSql(
      this.dataSource.manager,
      `UPDATE webhooks SET url = COALESCE($3, url), event_types = COALESCE($4, event_types), description = COALESCE($5, description),
              status = CASE WHEN $6::boolean IS NULL THEN status WHEN $6 THEN 'enabled' ELSE 'disabled' END,
              disabled_reason = CASE WHEN $6::boolean IS NULL THEN disabled_reason WHEN $6 THEN NULL ELSE 'disabled by the API' END,
              failure_streak = CASE WHEN $6::boolean THEN 0 ELSE failure_streak END, updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id, set.url ?? null, set.event_types ?? null, set.description ?? null, set.enabled ?? null],
    );
    return affected > 0;
  }

  async list(tenantId: string, limit: number, before?: { at: Date; id: string }): Promise<WebhookRow[]> {
    const { rows } = await execSql<WebhookRow>(
      this.dataSource.manager,
      `SELECT * FROM webhooks WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3)) ORDER BY created_at DESC, id DESC LIMIT $4`,
      [tenantId, before?.at ?? null, before?.id ?? '', limit],
    );
    return rows;
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const { affected } = await execSql(this.dataSource.manager, `DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return affected > 0;
  }

  async deliveries(tenantId: string, webhookId: string, limit: number, before?: { at: Date; id: string }): Promise<DeliveryRow[]> {
    const { rows } = await execSql<DeliveryRow>(
      this.dataSource.manager,
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2
          AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4)) ORDER BY created_at DESC, id DESC LIMIT $5`,
      [tenantId, webhookId, before?.at ?? null, before?.id ?? '', limit],
    );
    return rows;
  }

  /** Manual redelivery: the delivery is pending again, due now, with the same id. */
  async redeliver(tenantId: string, webhookId: string, id: string): Promise<DeliveryRow | null> {
    const { rows } = await execSql<DeliveryRow>(
      this.dataSource.manager,
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() WHERE tenant_id = $1 AND webhook_id = $2 AND id = $3 RETURNING ${DELIVERY_COLUMNS}`,
      [tenantId, webhookId, id],
    );
    return rows[0] ?? null;
  }

  /** Claims an enabled webhook no live worker holds (its previous holder's claim expired or was released). */
  async claimNext(claim: WebhookClaim, skip: string[]): Promise<WebhookRow | null> {
    const { rows } = await execSql<WebhookRow>(
      this.dataSource.manager,
      `UPDATE webhooks w SET claim_owner = $1, claim_token = $2, claim_until = now() + make_interval(secs => $3)
         WHERE w.id = (SELECT id FROM webhooks WHERE status = 'enabled' AND (claim_until IS NULL OR claim_until < now()) AND NOT (id = ANY($4::text[]))
                        ORDER BY claim_until NULLS FIRST LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING w.*`,
      [claim.owner, claim.token, claim.leaseSeconds, skip],
    );
    return rows[0] ?? null;
  }

  /** Extends the claim; false when another worker holds it now. */
  async renew(id: string, claim: WebhookClaim): Promise<boolean> {
    const { affected } = await execSql(
      this.dataSource.manager,
      `UPDATE webhooks SET claim_until = now() + make_interval(secs => $3) WHERE id = $1 AND claim_token = $2`,
      [id, claim.token, claim.leaseSeconds],
    );
    return affected > 0;
  }

  async release(id: string, token: string): Promise<void> {
    await execSql(
      this.dataSource.manager,
      `UPDATE webhooks SET claim_until = NULL, claim_owner = NULL, claim_token = NULL WHERE id = $1 AND claim_token = $2`,
      [id, token],
    );
  }

  /**
   * Writes the deliveries of events read from the feed and moves the webhook's cursor past them, in one statement, while
   * `token` holds its claim: a delivery is durable before its first attempt. False when the claim was lost.
   */
  async enqueue(webhook: WebhookRow, token: string, deliveries: NewDelivery[], cursor: number): Promise<boolean> {
    const { rows } = await execSql<{ id: string }>(
      this.dataSource.manager,
      `WITH w AS (UPDATE webhooks SET feed_cursor = $3 WHERE id = $1 AND claim_token = $2 RETURNING id, tenant_id),
            d AS (INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, event_id, event_type, feed_cursor, payload)
                  SELECT x.id, w.id, w.tenant_id, x.event_id, x.event_type, x.cursor, x.payload::jsonb
                    FROM w, unnest($4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[]) AS x(id, event_id, event_type, cursor, payload)
                  ON CONFLICT (webhook_id, event_id) DO NOTHING)
       SELECT id FROM w`,
      [
        webhook.id,
        token,
        cursor,
        deliveries.map((d) => d.id),
        deliveries.map((d) => d.eventId),
        deliveries.map((d) => d.eventType),
        deliveries.map((d) => d.feedCursor),
        deliveries.map((d) => JSON.stringify(d.payload)),
      ],
    );
    return rows.length > 0;
  }

  /** The webhook's oldest pending delivery (feed order), with whether it is due now. */
  async head(webhookId: string): Promise<(DeliveryRow & { due: boolean }) | null> {
    const { rows } = await execSql<DeliveryRow & { due: boolean }>(
      this.dataSource.manager,
      `SELECT ${DELIVERY_COLUMNS}, next_attempt_at <= now() AS due FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' ORDER BY feed_cursor LIMIT 1`,
      [webhookId],
    );
    return rows[0] ?? null;
  }

  /** Records an attempt (the claim's holder only): delivered, retried after `retryInMs`, or failed for good. */
  async attempted(
    d: DeliveryRow,
    token: string,
    a: { status: DeliveryStatus; code: number | null; error: string | null; response: string | null; retryInMs: number },
  ): Promise<boolean> {
    const { affected } = await execSql(
      this.dataSource.manager,
      `UPDATE webhook_deliveries SET status = $3, attempts = attempts + 1, last_status_code = $4, last_error = $5, last_response = $6,
              next_attempt_at = now() + make_interval(secs => $7::double precision / 1000), delivered_at = CASE WHEN $3 = 'delivered' THEN now() END
        WHERE id = $1 AND status = 'pending' AND EXISTS (SELECT 1 FROM webhooks WHERE id = $2 AND claim_token = $8)`,
      [d.id, d.webhook_id, a.status, a.code, a.error, a.response, a.retryInMs, token],
    );
    return affected > 0;
  }

  /** A delivery ended: a delivered one resets the streak, a failed one adds to it and disables the webhook at `disableAfter`. True when disabled. */
  async settle(webhookId: string, delivered: boolean, disableAfter: number, reason: string): Promise<boolean> {
    const { rows } = await execSql<{ status: WebhookStatus }>(
      this.dataSource.manager,
      `UPDATE webhooks SET failure_streak = CASE WHEN $2 THEN 0 ELSE failure_streak + 1 END,
              status = CASE WHEN NOT $2 AND failure_streak + 1 >= $3 THEN 'disabled' ELSE status END,
              disabled_reason = CASE WHEN NOT $2 AND failure_streak + 1 >= $3 THEN $4 ELSE disabled_reason END
        WHERE id = $1 RETURNING status`,
      [webhookId, delivered, disableAfter, reason],
    );
    return rows[0]?.status === 'disabled';
  }

  /** Retention: ended deliveries (delivered, failed) older than `olderThan`, then beyond the newest `keepNewest`; never a pending one. */
  async prune(olderThan: Date, keepNewest: number): Promise<number> {
    return pruneByAgeAndCount(this.dataSource.manager, { table: 'webhook_deliveries', keep: "status = 'pending'" }, olderThan, keepNewest);
  }
}
