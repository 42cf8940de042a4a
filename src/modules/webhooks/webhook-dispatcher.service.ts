import { randomUUID } from 'node:crypto';
import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { randomHex } from '@core/context/random-hex';
import { openSecret, resolveSecretKey } from '@core/crypto/secret-box';
import { storableText } from '@core/database/storable';
import { PeriodicPass } from '@core/async/periodic-pass';
import { LEASE_OWNER } from '@core/lease';
import { rootLogger } from '@core/logging/logger';
import { checkOutboundUrl } from '@core/net/outbound-url-policy';
import { pinnedRequest } from '@core/net/pinned-request';
import { EventStore } from '@modules/events';
import { signatureHeaders } from './webhook-signature';
import { type DeliveryRow, type WebhookClaim, type WebhookRow, WebhooksRepository } from './webhooks.repository';

/** Feed events read per pull. */
const PULL = 200;
/** A receiver's answer kept in the delivery log (bytes). */
const MAX_RESPONSE_BYTES = 1024;
/** The longest wait between two attempts of one delivery. */
const MAX_BACKOFF_MS = 3_600_000;

/** The time to the next attempt after `attempts` failed ones: 1 s, 2 s, 4 s… up to an hour. */
export const backoffMs = (attempts: number): number => Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, attempts - 1));

/** Whether a subscription's type (`run.finished`, `run.*`, `*`) covers an event type. */
export const matchesType = (wanted: string, type: string): boolean =>
  wanted === '*' || wanted === type || (wanted.endsWith('.*') && type.startsWith(wanted.slice(0, -1)));

/** The body every attempt of a delivery sends (Standard Webhooks' `{type, timestamp, data}`; `data` is the feed envelope). */
export const deliveryBody = (payload: Record<string, unknown>): string => JSON.stringify(payload);

/**
 * Delivers the public feed to webhooks (docs/webhooks.md), on workers. Each pass claims the enabled webhooks no live worker
 * holds, one at a time under the run lease: it reads the feed after the webhook's cursor (its tenant, its event types),
 * writes a delivery per event and moves the cursor in one statement (durable before any attempt), then attempts the
 * pending deliveries in feed order, one at a time. A failure schedules a retry with exponential backoff and holds the
 * later ones back (in order per webhook); past GATEWAY_WEBHOOK_RETRY_WINDOW the delivery fails and the next goes; after
 * GATEWAY_WEBHOOK_DISABLE_AFTER failed deliveries in a row the webhook is disabled with the reason. A worker that dies
 * mid-attempt leaves the claim to expire: the next holder sends the same delivery again, with the same `webhook-id`.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly passes = new PeriodicPass('webhook pass', () => this.pass());
  private readonly secretKey: Buffer | undefined;

  constructor(
    private readonly repo: WebhooksRepository,
    private readonly events: EventStore,
    private readonly config: AppConfig,
  ) {
    this.secretKey = resolveSecretKey(config);
  }

  onApplicationBootstrap(): void {
    this.passes.start(this.config.tasks.webhooks.intervalMs);
  }

  /** An attempt cut short by the shutdown is sent again by the next claim holder (same webhook-id). */
  onApplicationShutdown(): Promise<void> {
    return this.passes.stop();
  }

  /** One pass now (tests; the timer otherwise). */
  tick(): Promise<void> {
    return this.passes.run();
  }

  /** Claims each webhook no live worker holds, once, and serves it. */
  private async pass(): Promise<void> {
    const done: string[] = [];
    while (!this.passes.stopped) {
      // The claim outlasts one attempt (renewed before each): a receiver that holds the request to its timeout does
      // not let a second worker send the same delivery meanwhile; a dead holder's claim ends within lease + timeout.
      const { leaseSeconds, webhooks } = this.config.tasks;
      const claim: WebhookClaim = { owner: LEASE_OWNER, token: randomUUID(), leaseSeconds: leaseSeconds + Math.ceil(webhooks.timeoutMs / 1000) };
      const hook = await this.repo.claimNext(claim, done);
      if (!hook) return;
      done.push(hook.id);
      try {
        await this.serve(hook, claim);
      } finally {
        await this.repo.release(hook.id, claim.token);
      }
    }
  }

  /** Pulls the webhook's new events into deliveries, then attempts what is due, in order. */
  private async serve(hook: WebhookRow, claim: WebhookClaim): Promise<void> {
    let cursor = Number(hook.feed_cursor);
    for (;;) {
      // Exact types filter in the query; a family (`run.*`) or `*` reads the tenant's feed and keeps what matches.
      const exact = hook.event_types.every((t) => !t.endsWith('*'));
      const page = await this.events.listFeed({ tenantId: hook.tenant_id, types: exact ? hook.event_types : undefined }, cursor, PULL);
      if (page.events.length === 0) break;
      const wanted = page.events.filter((e) => hook.event_types.some((t) => matchesType(t, e.type)));
      const deliveries = wanted.map((e) => ({
        id: `msg_${randomHex(12)}`,
        eventId: e.event_id,
        eventType: e.type,
        feedCursor: e.sequence,
        payload: { type: e.type, timestamp: e.occurred_at, data: e },
      }));
      if (!(await this.repo.enqueue(hook, claim.token, deliveries, page.next))) return;
      cursor = page.next;
      if (page.events.length < PULL) break;
    }
    const secret = openSecret(this.secretKey, hook.secret);
    if (!secret) {
      await this.repo.settle(hook.id, false, 1, 'the signing secret cannot be opened with this server secret key (GATEWAY_SECRET_KEY changed?)');
      return;
    }
    for (let head = await this.repo.head(hook.id); head?.due && !this.passes.stopped; head = await this.repo.head(hook.id)) {
      if (!(await this.repo.renew(hook.id, claim))) return;
      if (!(await this.attempt(hook, head, secret, claim.token))) return;
    }
  }

  /** One attempt of a delivery; true when the next one may go (this one was delivered, or failed for good). */
  private async attempt(hook: WebhookRow, d: DeliveryRow, secret: string, token: string): Promise<boolean> {
    const { timeoutMs, retryWindowMs, disableAfter, allowPrivate } = this.config.tasks.webhooks;
    const body = deliveryBody(d.payload);
    let code: number | null = null;
    let error: string | null = null;
    let response: string | null = null;
    // The URL is checked again at every attempt, and the connection pinned to the checked address (no DNS rebinding).
    const verdict = await checkOutboundUrl(hook.url, { allowPrivate, allowedHosts: [], selfPort: this.config.server.port });
    if (!verdict.ok) {
      error = `refused by the outbound policy: ${verdict.message}`;
    } else {
      try {
        const res = await pinnedRequest(verdict.url, verdict.address, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'user-agent': 'hecate-webhooks', ...signatureHeaders(secret, d.id, body) },
          timeoutMs,
          maxBytes: MAX_RESPONSE_BYTES,
        });
        code = res.status;
        response = storableText(res.body.toString('utf8'));
        if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
      } catch (err) {
        error = (err as Error).message;
      }
    }
    if (error === null) {
      await this.repo.attempted(d, token, { status: 'delivered', code, error, response, retryInMs: 0 });
      await this.repo.settle(hook.id, true, disableAfter, '');
      return true;
    }
    const expired = Date.now() + backoffMs(d.attempts + 1) - d.created_at.getTime() > retryWindowMs;
    await this.repo.attempted(d, token, { status: expired ? 'failed' : 'pending', code, error, response, retryInMs: backoffMs(d.attempts + 1) });
    if (!expired) return false;
    const disabled = await this.repo.settle(hook.id, false, disableAfter, `${disableAfter} deliveries in a row failed; the last: ${error}`);
    rootLogger().warn({ webhook_id: hook.id, delivery_id: d.id, error, disabled }, 'webhook delivery failed for good');
    return !disabled;
  }
}
