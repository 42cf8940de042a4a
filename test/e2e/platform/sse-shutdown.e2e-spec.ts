import { request } from 'node:http';
import { waitFor } from '../../support/infra';
import { embeddedEnv, startServer } from '../../support/server-process';

/** Reads an SSE response as raw text until it ends. */
function openRaw(url: string, headers: Record<string, string>): Promise<{ status: number; text: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      const ended = new Promise<void>((done) => res.on('close', done));
      resolve({ status: res.statusCode ?? 0, text: () => text, ended });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('SIGTERM with open SSE clients (embedded)', () => {
  it('ends every stream with a reconnect hint and exits 0 within the grace period', async () => {
    const server = await startServer('all', { ...embeddedEnv(), GATEWAY_AUTH_TOKEN: 'tok', GATEWAY_SHUTDOWN_GRACE_MS: '5000' });
    const auth = { authorization: 'Bearer tok' };
    const streams = await Promise.all([0, 1, 2].map(() => openRaw(`${server.url}/hecate/v1/events/stream`, auth)));
    for (const s of streams) expect(s.status).toBe(200);
    // The feed writes its `: ok` comment at once: every stream is open before the signal.
    await waitFor(() => streams.every((s) => s.text().includes(': ok')), { intervalMs: 20, what: 'every stream to open' });
    const t0 = Date.now();
    server.proc.kill('SIGTERM');
    await Promise.all(streams.map((s) => s.ended));
    for (const s of streams) expect(s.text()).toMatch(/retry: \d+\nevent: reconnect\ndata: \{"reason":"server_shutdown"\}\n\n$/);
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
