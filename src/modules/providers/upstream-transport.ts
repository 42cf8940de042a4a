import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { buildConnector, Dispatcher, Pool } from 'undici';
import { checkAddress, defaultPort, UrlBlockReason, UrlPolicyContext } from '@core/net/outbound-url-policy';
import { ignoreFailure } from '@core/logging/ignore-failure';

/** undici rejects a close only of a pool already destroyed (a destroy does not reject): its sockets are gone either way. */
const poolGone = ignoreFailure('closing an upstream connection pool', 'the pool was already destroyed');

/** Thrown by the connector when the URL policy refuses the resolved address. */
export class UrlPolicyError extends Error {
  readonly code = 'HECATE_URL_BLOCKED';
  constructor(
    readonly reason: UrlBlockReason,
    message: string,
  ) {
    super(message);
    this.name = 'UrlPolicyError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A connector that applies the outbound URL policy after DNS resolution (every resolved address must pass,
 * so a name that resolves to a public and a metadata address is refused), and to IP literals directly.
 */
function policyConnector(ctx: UrlPolicyContext, port: number, connectTimeoutMs: number): buildConnector.connector {
  const lookup = (hostname: string, options: { all?: boolean; family?: number }, cb: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, []);
      for (const a of addresses) {
        const verdict = checkAddress(a.address, port, ctx);
        if (!verdict.ok) return cb(new UrlPolicyError(verdict.reason ?? 'url_blocked', verdict.message ?? 'refused') as NodeJS.ErrnoException, []);
      }
      if (options.all) return cb(null, addresses);
      return cb(null, addresses[0].address, addresses[0].family);
    });
  };
  const base = buildConnector({ timeout: connectTimeoutMs, lookup } as buildConnector.BuildOptions);
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = checkAddress(host, port, ctx);
      if (!verdict.ok) return callback(new UrlPolicyError(verdict.reason ?? 'url_blocked', verdict.message ?? 'refused'), null);
    }
    return base(opts, callback);
  };
}

export interface EndpointTimeouts {
  connectMs: number;
  firstByteMs: number;
  idleMs: number;
}

/** One provider origin: a keep-alive undici Pool behind the URL policy, plus the base path (`/v1`). */
export class UpstreamEndpoint {
  readonly origin: string;
  readonly basePath: string;
  readonly pool: Pool;

  constructor(baseUrl: string, policy: UrlPolicyContext, timeouts: EndpointTimeouts) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(this.origin, {
      connect: policyConnector(policy, defaultPort(url), timeouts.connectMs),
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
      headersTimeout: timeouts.firstByteMs,
      bodyTimeout: timeouts.idleMs,
      pipelining: 1,
    });
  }

  request(options: Omit<Dispatcher.RequestOptions, 'origin'>): Promise<Dispatcher.ResponseData> {
    return this.pool.request(options);
  }

  /** Lets in-flight requests finish, then closes the sockets (used when a provider's URL or key changes). */
  close(): void {
    void this.pool.close().catch(poolGone);
  }

  destroy(): Promise<void> {
    return this.pool.destroy().catch(poolGone);
  }
}
