import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { LlmClient } from '@modules/providers/llm-client';
import { RuntimeProvider } from '@modules/providers/runtime-provider';
import { UpstreamError } from '@modules/providers/upstream-error';

const provider = (baseUrl: string, policy: { allowPrivate: boolean; selfPort: number }) =>
  new RuntimeProvider(
    {
      id: 'p',
      presetId: null,
      customName: null,
      kind: 'cloud',
      protocol: 'openai',
      baseUrl,
      defaultModel: undefined,
      apiKey: 'sk-policy-test-key',
      enabled: true,
      source: 'env',
      envConfigured: true,
      createdAt: new Date(),
      updatedAt: new Date(),
    },
    policy,
    { connectMs: 2000, firstByteMs: 2000, idleMs: 2000 },
  );

async function failure(p: RuntimeProvider): Promise<UpstreamError> {
  try {
    await LlmClient.getJson(p, p.modelsPath, 2000);
  } catch (err) {
    p.closeEndpoint();
    return err as UpstreamError;
  }
  throw new Error('expected the call to be refused');
}

describe('outbound URL policy at connect time (after DNS resolution)', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"m"}]}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses a host name that resolves to loopback for a cloud provider, without sending anything', async () => {
    const e = await failure(provider(`http://localhost:${port}/v1`, { allowPrivate: false, selfPort: 1 }));
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({ kind: 'url_blocked', info: { blockReason: 'private_address', retryable: false } });
    expect(hits).toBe(0);
  });

  it('allows it for a local provider (or with the override)', async () => {
    const p = provider(`http://localhost:${port}/v1`, { allowPrivate: true, selfPort: 1 });
    await expect(LlmClient.getJson(p, p.modelsPath, 2000)).resolves.toEqual({ data: [{ id: 'm' }] });
    p.closeEndpoint();
    expect(hits).toBe(1);
  });

  it('refuses the gateway itself and cloud-metadata addresses even for local providers', async () => {
    expect(await failure(provider(`http://localhost:${port}/v1`, { allowPrivate: true, selfPort: port }))).toMatchObject({
      kind: 'url_blocked',
      info: { blockReason: 'self_referential' },
    });
    expect(await failure(provider('http://169.254.169.254/latest', { allowPrivate: true, selfPort: 1 }))).toMatchObject({
      kind: 'url_blocked',
      info: { blockReason: 'url_blocked' },
    });
    expect(hits).toBe(1);
  });

  it('never puts the provider key in the error', async () => {
    const e = await failure(provider(`http://localhost:${port}/v1`, { allowPrivate: false, selfPort: 1 }));
    expect(e.message).not.toContain('sk-policy-test-key');
  });
});
