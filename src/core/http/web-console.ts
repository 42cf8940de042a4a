import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './all-exceptions.filter';
import { PUBLIC_ROUTE } from './auth/public.decorator';
import { NotFoundError } from './domain-error';

/**
 * The operator console (`web/`, built by `npm run build:web` into `dist/web`): one HTML page for the UI paths below and
 * the hashed files under `/assets/`, served from memory by the api (README, "Operator console"). Every other path, API
 * or not, keeps its own route or the JSON 404 envelope: an unknown `/v1/…`, `/hecate/…` or `/mcp…` path never falls
 * through to the page.
 */
export const CONSOLE_UI_PATHS = ['/', '/sign-in', '/chat', '/chat/:sessionId', '/tasks', '/tasks/:taskId', '/providers', '/usage', '/system'] as const;

/**
 * A strict policy on the page: scripts, styles, images and connections only from this server, no inline script, no
 * framing (docs/security.md, "The operator console"). `style-src` stays 'self': React sets styles through the CSSOM,
 * which the policy does not govern.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** Types worth compressing (images and fonts are compressed already). */
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt', '.map']);

export interface ConsoleFile {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  etag: string;
  /** Hashed names under /assets/ never change; the page and the top-level files are revalidated. */
  immutable: boolean;
}

/** A file served from memory: its bytes (gzipped too when worth it), type and entity tag. `name` gives the type. */
export function load(path: string, immutable: boolean, contents?: Buffer, name = path): ConsoleFile {
  const body = contents ?? readFileSync(path);
  const ext = extname(name).toLowerCase();
  const gzip = COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body, { level: 9 }) : undefined;
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, gzip, type: TYPES[ext] ?? 'application/octet-stream', etag, immutable };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** Sends a file with the page's security headers (`csp` replaces the console's policy), its cache rules and gzip when accepted. */
export function send(request: FastifyRequest, reply: FastifyReply, file: ConsoleFile, csp = CONSOLE_CSP): FastifyReply {
  void reply
    .headers(SECURITY_HEADERS)
    .header('content-security-policy', csp)
    .header('content-type', file.type)
    .header('etag', file.etag)
    .header('vary', 'accept-encoding');
  void reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const acceptsGzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (file.gzip && acceptsGzip) return reply.header('content-encoding', 'gzip').send(file.gzip);
  return reply.send(file.body);
}

/**
 * Registers the console's routes when `dir` holds a build (`index.html`); answers whether it did. Without a build the
 * UI paths stay unknown and answer the JSON 404 like any other.
 */
export function serveConsole(app: INestApplication, dir: string): boolean {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  const indexPath = join(dir, 'index.html');
  if (!existsSync(indexPath) || !statSync(indexPath).isFile()) return false;
  const index = load(indexPath, false);
  const config = { [PUBLIC_ROUTE]: true };
  for (const path of CONSOLE_UI_PATHS) fastify.get(path, { config }, (request, reply) => send(request, reply, index));

  const assets = new Map<string, ConsoleFile>();
  const assetsDir = join(dir, 'assets');
  if (existsSync(assetsDir)) for (const path of filesUnder(assetsDir)) assets.set(relative(assetsDir, path).split('\\').join('/'), load(path, true));
  fastify.get('/assets/*', { config }, (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    const file = assets.get(name);
    if (file) return send(request, reply, file);
    sendError(new NotFoundError(`no console asset ${name}`), request, reply);
    return reply;
  });

  // Top-level files of the build besides the page (the icon): one route each, nothing else at the root.
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name === 'index.html') continue;
    const file = load(join(dir, entry.name), false);
    fastify.get(`/${entry.name}`, { config }, (request, reply) => send(request, reply, file));
  }
  return true;
}
