import { createHmac, randomBytes } from 'node:crypto';

/** A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The Standard Webhooks headers of one attempt (https://www.standardwebhooks.com): `webhook-id` (the delivery's id, the
 * same on every attempt, so receivers deduplicate), `webhook-timestamp` (seconds), `webhook-signature` (`v1,` + base64
 * HMAC-SHA256 of `id.timestamp.body` under the secret's bytes).
 */
export function signatureHeaders(secret: string, id: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
