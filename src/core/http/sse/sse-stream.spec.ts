import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { FastifyInstance, FastifyReply } from 'fastify';
import { MetricsService } from '@core/metrics/metrics.service';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import { closeAllForShutdown, SseStream, sseCounters } from './sse-stream';

/** A real Fastify server whose one route hands its reply to `handler`, and a raw HTTP client reading the bytes. */
async function serve(handler: (reply: FastifyReply) => void): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  app.get('/s', (_req, reply) => {
    handler(reply);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/s` };
}

function read(
  url: string,
  opts: { pause?: boolean } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let body = '';
      if (!opts.pause) res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      else res.pause();
      const ended = new Promise<void>((done) => {
        res.on('end', done);
        res.on('close', done);
      });
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: () => body, ended });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('SseStream (core/http/sse)', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('writes the head, frames with ids and events, comments, and ends', async () => {
    let stream!: SseStream;
    const s = await serve((reply) => {
      stream = new SseStream(reply, { stream: 'events_feed', heartbeatMs: 0, maxBufferBytes: 1 << 20, headers: { 'x-extra': 'yes' } });
      stream.comment('ok');
      stream.send({ id: 7, event: 'delta', data: '{"a":1}' });
      stream.end('data: last\n\n');
    });
    app = s.app;
    const r = await read(s.url);
    await r.ended;
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(r.headers['x-extra']).toBe('yes');
    expect(r.body()).toBe(': ok\n\nid: 7\nevent: delta\ndata: {"a":1}\n\ndata: last\n\n');
    expect(stream.endReason).toBe('ended');
    expect(stream.signal.aborted).toBe(true);
  });

  it('sends heartbeat comments at the configured interval', async () => {
    // Waits on the bytes, not on a wall-clock window: a loaded CI machine delays timers, never removes pings.
    let stream!: SseStream;
    const s = await serve((reply) => {
      stream = new SseStream(reply, { stream: 'events_feed', heartbeatMs: 30, maxBufferBytes: 1 << 20 });
    });
    app = s.app;
    const r = await read(s.url);
    const pings = (): number => r.body().match(/: ping\n\n/g)?.length ?? 0;
    const deadline = Date.now() + 10_000;
    while (pings() < 3 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
    stream.end();
    await r.ended;
    expect(pings()).toBeGreaterThanOrEqual(3);
    expect(r.body()).toMatch(/^(: ping\n\n)+$/);
  });

  it('disconnects a slow consumer once its unread bytes pass the bound, without growing memory', async () => {
    let stream!: SseStream;
    let refused = 0;
    const before = sseCounters.slowConsumerDisconnects;
    const metrics = new MetricsService(new InProcessRunQueue());
    const s = await serve((reply) => {
      stream = new SseStream(reply, { stream: 'events_feed', heartbeatMs: 0, maxBufferBytes: 64 * 1024 }, metrics);
      const chunk = `data: ${'x'.repeat(16 * 1024)}\n\n`;
      for (let i = 0; i < 10_000 && stream.isOpen; i++) if (!stream.write(chunk)) refused++;
    });
    app = s.app;
    const r = await read(s.url, { pause: true });
    await stream.closed;
    expect(stream.endReason).toBe('slow_consumer');
    expect(refused).toBe(1);
    expect(sseCounters.slowConsumerDisconnects).toBe(before + 1);
    expect(r.status).toBe(200);
    // Per stream in /metrics: the disconnect counted, the connection gone, the request recorded once (at open).
    const text = (await metrics.render()).body;
    expect(text).toContain('hecate_sse_slow_consumer_disconnects_total{stream="events_feed"} 1\n');
    expect(text).toContain('hecate_sse_connections{stream="events_feed"} 0\n');
    expect(text).toContain('hecate_http_request_duration_seconds_count{method="GET",route="/s",status="200"} 1\n');
  });

  it('relay() reports backpressure instead of disconnecting, and drained() resolves when the client reads', async () => {
    let stream!: SseStream;
    let sawBackpressure = false;
    const s = await serve((reply) => {
      stream = new SseStream(reply, { stream: 'events_feed', heartbeatMs: 0, maxBufferBytes: 1024, reconnectable: false, deferHead: true });
      void (async () => {
        const chunk = `data: ${'y'.repeat(64 * 1024)}\n\n`;
        for (let i = 0; i < 64; i++) {
          if (!stream.relay(chunk)) {
            sawBackpressure = true;
            await stream.drained();
          }
        }
        stream.end();
      })();
    });
    app = s.app;
    const r = await read(s.url);
    await r.ended;
    expect(sawBackpressure).toBe(true);
    expect(stream.endReason).toBe('ended');
    expect(r.body().length).toBe(64 * (64 * 1024 + 8));
  });

  it('on shutdown ends reconnectable streams with a retry hint and leaves relays to finish', async () => {
    const streams: SseStream[] = [];
    const s = await serve((reply) => {
      streams.push(new SseStream(reply, { stream: 'events_feed', heartbeatMs: 0, maxBufferBytes: 1 << 20, reconnectable: streams.length === 0 }));
    });
    app = s.app;
    const resumable = await read(s.url);
    const relay = await read(s.url);
    await new Promise((r) => setTimeout(r, 50));
    expect(closeAllForShutdown()).toBe(1);
    await resumable.ended;
    expect(resumable.body()).toBe('retry: 1000\nevent: reconnect\ndata: {"reason":"server_shutdown"}\n\n');
    expect(streams[0].endReason).toBe('shutdown');
    expect(streams[1].isOpen).toBe(true);
    streams[1].end();
    await relay.ended;
  });

  it("a shutdown before any frame with an id names the stream's start on its reconnect frame; after one, it does not", async () => {
    const streams: SseStream[] = [];
    const s = await serve((reply) => {
      const sse = new SseStream(reply, { stream: 'agent_chat', heartbeatMs: 0, maxBufferBytes: 1 << 20 });
      sse.startAt('turn_1:stream_1:0');
      if (streams.length === 1) sse.send({ id: 'turn_1:stream_1:4', event: 'delta', data: '{}' });
      streams.push(sse);
    });
    app = s.app;
    const fresh = await read(s.url);
    const started = await read(s.url);
    await new Promise((r) => setTimeout(r, 50));
    expect(closeAllForShutdown()).toBe(2);
    await Promise.all([fresh.ended, started.ended]);
    expect(fresh.body()).toBe('id: turn_1:stream_1:0\nretry: 1000\nevent: reconnect\ndata: {"reason":"server_shutdown"}\n\n');
    expect(started.body()).toBe('id: turn_1:stream_1:4\nevent: delta\ndata: {}\n\nretry: 1000\nevent: reconnect\ndata: {"reason":"server_shutdown"}\n\n');
  });

  it('notices a client that goes away', async () => {
    let stream!: SseStream;
    const s = await serve((reply) => {
      stream = new SseStream(reply, { stream: 'events_feed', heartbeatMs: 0, maxBufferBytes: 1 << 20 });
    });
    app = s.app;
    await new Promise<void>((resolve) => {
      const req = request(s.url, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.end();
      setTimeout(() => stream?.comment('hello'), 50);
    });
    await stream.closed;
    expect(stream.endReason).toBe('client_closed');
    expect(stream.write('data: late\n\n')).toBe(false);
  });
});
