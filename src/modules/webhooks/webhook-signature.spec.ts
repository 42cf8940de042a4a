import { createHmac } from 'node:crypto';
import { newWebhookSecret, signatureHeaders } from './webhook-signature';

describe('webhook signatures', () => {
  it('signs id.timestamp.body with the secret bytes, as Standard Webhooks specifies', () => {
    // The specification's example: https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
    const headers = signatureHeaders(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      '{"test": 2432232314}',
      new Date(1614265330_000),
    );
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('makes secrets of 32 random bytes', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(newWebhookSecret());
    const key = Buffer.from(a.slice(6), 'base64');
    expect(key).toHaveLength(32);
    expect(signatureHeaders(a, 'm', 'b', new Date(0))['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update('m.0.b').digest('base64')}`);
  });
});
