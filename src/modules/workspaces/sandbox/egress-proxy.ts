import { lookup } from 'node:dns/promises';
import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { SANDBOX_RELAY_HEADER } from '@core/net/sandbox-relay';
import { checkOutboundUrl, isLocalAddress, normalizeAddress, type OutboundPolicy } from '@core/net/outbound-url-policy';
import { FORWARDER_SOURCE } from './netns-forwarder';

/** Where the egress socket appears inside every sandbox with network, and the port its forwarder listens on there. */
export const SANDBOX_EGRESS_SOCKET = '/run/hecate-egress.sock';
export const SANDBOX_PROXY_PORT = 3128;
/**
 * The worker's node binary, bound where the forwarder's user can always run it: the runtime's own prefix may sit in a
 * directory only root can traverse (a node under /root, seen through an operator's workspace at `/`).
 */
export const SANDBOX_FORWARDER_NODE = '/run/hecate-egress-node';
const MAX_CONNECTIONS = 1024;
const CONNECT_TIMEOUT_MS = 30_000;
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'upgrade'];

export interface EgressSettings {
  outbound: OutboundPolicy;
  /** Ports refused on every local address whatever the allowlists say: the API, the worker's health port, a local Postgres or Redis. */
  reservedLocalPorts: number[];
  /** The server's Postgres and Redis, GATEWAY_TASK_SANDBOX_EGRESS_DENY: refused by name and at every address they resolve to. */
  reservedEndpoints: Array<{ host: string; port: number }>;
  /**
   * This server's ingress as adapters are given it (embedded: its own port; else GATEWAY_AGENT_ADAPTER_GATEWAY_URL when
   * http): only `/v1/…` with a credential, marked as relayed from a sandbox. `local`: it listens on loopback, so the
   * forwarder also listens on its port inside the sandbox for clients that ignore proxy variables.
   */
  gateway: { host: string; port: number; local: boolean } | null;
}

type Verdict = { ok: true; address: string; port: number } | { ok: false; message: string };

const endpoint = (raw: string, defaultPort: number): { host: string; port: number } | null => {
  try {
    const u = new URL(raw.includes('://') ? raw : `tcp://${raw}`);
    return { host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port: u.port ? Number(u.port) : defaultPort };
  } catch {
    return null;
  }
};

export function egressSettings(config: AppConfig): EgressSettings {
  const present = (e: { host: string; port: number } | null): e is { host: string; port: number } => e !== null && e.host !== '' && e.port > 0;
  const stores = [config.database.url ? endpoint(config.database.url, 5432) : null, config.redis.url ? endpoint(config.redis.url, 6379) : null].filter(present);
  const denied = config.tasks.sandboxEgressDeny.map((e) => endpoint(e, 0)).filter(present);
  let gateway: EgressSettings['gateway'] = null;
  const configured = config.agent.adapters.gatewayUrl;
  if (configured) {
    const u = endpoint(configured, configured.startsWith('https:') ? 443 : 80);
    if (u && configured.startsWith('http:')) gateway = { ...u, local: isLocalAddress(u.host === 'localhost' ? '127.0.0.1' : u.host) };
  } else if (config.mode === 'embedded') {
    gateway = { host: ['0.0.0.0', '::', ''].includes(config.server.host) ? '127.0.0.1' : config.server.host, port: config.server.port, local: true };
  }
  return {
    outbound: { ...config.tasks.outbound, selfPort: config.server.port },
    reservedLocalPorts: [config.server.port, config.server.workerHealthPort, ...stores.map((e) => e.port)],
    reservedEndpoints: [...stores, ...denied, ...(gateway && !gateway.local ? [{ host: gateway.host, port: gateway.port }] : [])],
    gateway,
  };
}

/**
 * The worker's egress proxy (docs/security.md): sandboxed commands with network have their own network namespace, and this
 * HTTP proxy on a unix socket is their only way out. Every destination (CONNECT for TLS, absolute URIs for plain HTTP)
 * is resolved here and checked with the task outbound policy, then connected to at the address that was checked; the
 * server's own API, health, Postgres and Redis ports are refused on any local address whatever the allowlists say.
 * One proxy serves every sandbox of the worker: it relays TCP to allowed destinations only, adds no credential and
 * keeps no state between connections, so one sandbox gains nothing from another's use of it. The socket lives in a
 * 0700 directory: outside the sandboxes only root reaches it.
 */
export class EgressProxy {
  private readonly server: Server;
  private reservedAddresses = new Set<string>();

  private constructor(
    private readonly settings: EgressSettings,
    private readonly dir: string,
    readonly socketPath: string,
  ) {
    this.server = createServer({ requestTimeout: 0 }, (req, res) => void this.onRequest(req, res));
    this.server.maxConnections = MAX_CONNECTIONS;
    this.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.onConnect(req, socket, head));
    this.server.on('clientError', (_err, socket) => socket.destroy());
  }

  static async start(settings: EgressSettings): Promise<EgressProxy> {
    const dir = mkdtempSync(join(tmpdir(), 'hecate-egress-'));
    const proxy = new EgressProxy(settings, dir, join(dir, 'proxy.sock'));
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(proxy.socketPath, resolve);
    });
    proxy.server.unref();
    // The sandbox uid connects through the bind-mounted socket; the directory keeps everyone else out.
    chmodSync(proxy.socketPath, 0o666);
    for (const e of settings.reservedEndpoints) {
      const addresses = isIP(e.host)
        ? [e.host]
        : await lookup(e.host, { all: true }).then(
            (r) => r.map((x) => x.address),
            () => [],
          );
      for (const a of addresses) proxy.reservedAddresses.add(`${normalizeAddress(a)}|${e.port}`);
    }
    return proxy;
  }

  /** `node -e <forwarder> …` in front of the command (it runs inside the sandbox, as the command's user). */
  command(argv: string[]): string[] {
    return [
      SANDBOX_FORWARDER_NODE,
      '-e',
      FORWARDER_SOURCE,
      '--',
      SANDBOX_EGRESS_SOCKET,
      String(SANDBOX_PROXY_PORT),
      String(this.settings.gateway?.local ? this.settings.gateway.port : 0),
      ...argv,
    ];
  }

  /**
   * bubblewrap arguments that put the socket into the sandbox (read-only: connecting needs no write access to the
   * mount) and point every client's proxy variables at the forwarder (NO_PROXY empty: "localhost" is the host's too).
   */
  bwrapArgs(): string[] {
    const proxy = `http://127.0.0.1:${SANDBOX_PROXY_PORT}`;
    const variables: Record<string, string> = { NO_PROXY: '', no_proxy: '', NODE_USE_ENV_PROXY: '1' };
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy']) variables[name] = proxy;
    return [
      ...Object.entries(variables).flatMap(([name, value]) => ['--setenv', name, value]),
      '--perms',
      '0755',
      '--dir',
      '/run',
      '--ro-bind',
      this.socketPath,
      SANDBOX_EGRESS_SOCKET,
      '--ro-bind',
      realpathSync(process.execPath),
      SANDBOX_FORWARDER_NODE,
    ];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The policy, then the walls no allowlist opens: the server's own ports on local addresses, its Postgres and Redis. */
  private async check(host: string, port: number): Promise<Verdict> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { ok: false, message: `invalid port ${port}` };
    const name = host.replace(/^\[|\]$/g, '').toLowerCase();
    const verdict = await checkOutboundUrl(`http://${isIP(name) === 6 ? `[${name}]` : name}:${port}/`, this.settings.outbound);
    if (!verdict.ok) return verdict;
    const address = verdict.address;
    if (this.settings.reservedEndpoints.some((e) => e.host === name && e.port === port) || this.reservedAddresses.has(`${address}|${port}`)) {
      return { ok: false, message: `${name}:${port} is this server's database or Redis; refused` };
    }
    if (this.settings.reservedLocalPorts.includes(port) && isLocalAddress(address)) {
      return { ok: false, message: `${name}:${port} is one of this server's own ports; refused` };
    }
    return { ok: true, address, port };
  }

  private refuse(host: string, port: number | string, message: string): void {
    rootLogger().info({ host, port, reason: message }, 'sandbox egress refused');
  }

  private async onConnect(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '');
    // A tunnel to this server's own ingress (Node's fetch tunnels even plain HTTP): its requests are read here, one by one.
    if (m && this.settings.gateway?.local && this.isGateway(m[1].replace(/^\[|\]$/g, '').toLowerCase(), Number(m[2]))) {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) socket.unshift(head);
      this.server.emit('connection', socket);
      return;
    }
    const verdict: Verdict = m ? await this.check(m[1], Number(m[2])) : { ok: false, message: 'CONNECT needs host:port' };
    if (!verdict.ok) {
      this.refuse(m?.[1] ?? String(req.url), m?.[2] ?? '', verdict.message);
      socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nhecate sandbox egress: ${verdict.message}\n`);
      return;
    }
    const up = connect({ host: verdict.address, port: verdict.port, timeout: CONNECT_TIMEOUT_MS });
    up.once('connect', () => {
      up.setTimeout(0);
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      socket.pipe(up);
      up.pipe(socket);
    });
    const fail = () => {
      if (up.connecting) socket.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n');
      else socket.destroy();
      up.destroy();
    };
    up.once('timeout', fail);
    up.once('error', fail);
    socket.once('close', () => up.destroy());
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url ?? '';
    // Origin form: a connection the forwarder relayed from the gateway port inside the sandbox.
    if (raw.startsWith('/')) {
      if (this.settings.gateway?.local) return this.toGateway(req, res, raw);
      return this.answer(res, 400, 'only proxy requests (absolute URIs) are relayed');
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return this.answer(res, 400, 'not an absolute URI');
    }
    if (url.protocol !== 'http:') return this.answer(res, 400, `${url.protocol} requests go through CONNECT`);
    const port = url.port ? Number(url.port) : 80;
    if (this.isGateway(url.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port)) return this.toGateway(req, res, url.pathname + url.search);
    const verdict = await this.check(url.hostname, port);
    if (!verdict.ok) {
      this.refuse(url.hostname, port, verdict.message);
      return this.answer(res, 403, verdict.message);
    }
    this.forward(req, res, { host: verdict.address, port: verdict.port, path: url.pathname + url.search, headers: cleaned(req.headers) });
  }

  private isGateway(host: string, port: number): boolean {
    const gw = this.settings.gateway;
    if (!gw || port !== gw.port) return false;
    if (gw.local) return host === 'localhost' || (isIP(host) !== 0 && isLocalAddress(host));
    return host === gw.host;
  }

  /** This server's ingress: inference routes only, with a credential, marked so it is never taken for the local operator. */
  private toGateway(req: IncomingMessage, res: ServerResponse, path: string): void {
    const gw = this.settings.gateway!;
    if (!/^\/v1(\/|$|\?)/.test(path)) {
      this.refuse(gw.host, gw.port, `path ${path.split('?')[0]} is not an inference route`);
      return this.answer(res, 403, `${gw.host}:${gw.port} is this server; sandboxes reach only its /v1 inference routes`);
    }
    if (!req.headers.authorization && !req.headers['x-api-key']) return this.answer(res, 401, 'a credential is required for this server');
    const headers = cleaned(req.headers);
    headers[SANDBOX_RELAY_HEADER] = '1';
    this.forward(req, res, { host: gw.host, port: gw.port, path, headers });
  }

  private forward(req: IncomingMessage, res: ServerResponse, to: { host: string; port: number; path: string; headers: IncomingHttpHeaders }): void {
    const up = httpRequest({
      host: to.host,
      port: to.port,
      method: req.method,
      path: to.path,
      headers: to.headers,
      setHost: false,
      timeout: CONNECT_TIMEOUT_MS,
    });
    up.on('response', (r) => {
      up.setTimeout(0);
      res.writeHead(r.statusCode ?? 502, cleaned(r.headers));
      r.pipe(res);
    });
    up.on('timeout', () => up.destroy(new Error('timeout')));
    up.on('error', () => (res.headersSent ? res.destroy() : this.answer(res, 502, 'upstream unreachable')));
    res.on('close', () => up.destroy());
    req.pipe(up);
  }

  private answer(res: ServerResponse, status: number, message: string): void {
    res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end(`hecate sandbox egress: ${message}\n`);
  }
}

function cleaned(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = { ...headers };
  for (const h of [...HOP_BY_HOP, SANDBOX_RELAY_HEADER]) delete out[h];
  return out;
}
