#!/usr/bin/env node
// The floor for any Node gateway: Fastify + an undici Pool, raw bytes in, raw bytes out (no parsing, no auth).
//   node passthrough-proxy.mjs <upstream-origin>   → first stdout line {"port":N}
import Fastify from 'fastify';
import { Pool } from 'undici';

const upstream = process.argv[2];
const pool = new Pool(upstream, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
const app = Fastify({ bodyLimit: 32 * 1024 * 1024 });
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

const forward = async (request, reply) => {
  const res = await pool.request({
    method: request.method,
    path: request.url,
    headers: {
      'content-type': 'application/json',
      authorization: request.headers.authorization ?? '',
      'x-api-key': request.headers['x-api-key'] ?? '',
      'anthropic-version': request.headers['anthropic-version'] ?? '',
    },
    body: request.body,
  });
  reply.code(res.statusCode).header('content-type', res.headers['content-type']);
  return reply.send(res.body);
};
app.post('/v1/chat/completions', forward);
app.post('/v1/messages', forward);
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
