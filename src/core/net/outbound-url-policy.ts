import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { embeddedIPv4, isLocalNat64, mappedIPv4 } from './embedded-ipv4';

/** Why a provider address is refused (docs/security.md). */
export type UrlBlockReason = 'url_blocked' | 'private_address' | 'self_referential';

export type AddressClass = 'metadata' | 'link_local' | 'loopback' | 'unspecified' | 'private' | 'public';

const list = (entries: Array<[string, number, 'ipv4' | 'ipv6']>): BlockList => {
  const b = new BlockList();
  for (const [net, prefix, type] of entries) b.addSubnet(net, prefix, type);
  return b;
};

// Cloud metadata endpoints: AWS/GCP/Azure/OCI (169.254.169.254), ECS task metadata, Alibaba, AWS IPv6.
const METADATA = list([
  ['169.254.169.254', 32, 'ipv4'],
  ['169.254.170.2', 32, 'ipv4'],
  ['100.100.100.200', 32, 'ipv4'],
  ['fd00:ec2::254', 128, 'ipv6'],
]);
const LINK_LOCAL = list([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
const LOOPBACK = list([
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);
const UNSPECIFIED = list([
  ['0.0.0.0', 8, 'ipv4'],
  ['::', 128, 'ipv6'],
]);
const PRIVATE = list([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
]);

/** `::ffff:127.0.0.1` (or `::ffff:7f00:1`) → `127.0.0.1`; brackets removed. */
export function normalizeAddress(address: string): string {
  const a = address.replace(/^\[|\]$/g, '');
  return mappedIPv4(a) ?? a;
}

/** Most to least dangerous: an address that embeds several IPv4 addresses takes the worst class among them. */
const SEVERITY: AddressClass[] = ['metadata', 'link_local', 'loopback', 'unspecified', 'private', 'public'];

export function classifyAddress(raw: string): AddressClass {
  const address = normalizeAddress(raw);
  const family = isIP(address);
  if (family === 0) return 'public';
  const own = classifyOwn(address, family === 4 ? 'ipv4' : 'ipv6');
  if (family === 4) return own;
  // NAT64, 6to4, Teredo, IPv4-compatible and -translated addresses reach (or claim) the IPv4 address they embed.
  const classes = [own, ...embeddedIPv4(address).map((v4) => classifyOwn(v4, 'ipv4'))];
  if (isLocalNat64(address)) classes.push('private');
  return SEVERITY.find((c) => classes.includes(c)) ?? 'public';
}

function classifyOwn(address: string, type: 'ipv4' | 'ipv6'): AddressClass {
  if (METADATA.check(address, type)) return 'metadata';
  if (LINK_LOCAL.check(address, type)) return 'link_local';
  if (LOOPBACK.check(address, type)) return 'loopback';
  if (UNSPECIFIED.check(address, type)) return 'unspecified';
  if (PRIVATE.check(address, type)) return 'private';
  return 'public';
}

/** Loopback, unspecified or one of this host's own interface addresses: where the server itself listens. */
export function isLocalAddress(raw: string): boolean {
  const address = normalizeAddress(raw);
  const cls = classifyAddress(address);
  return cls === 'loopback' || cls === 'unspecified' || isLocalInterface(address);
}

let localAddresses: Set<string> | undefined;
function isLocalInterface(address: string): boolean {
  localAddresses ??= new Set(
    Object.values(networkInterfaces())
      .flat()
      .filter((i): i is NonNullable<typeof i> => Boolean(i))
      .map((i) => normalizeAddress(i.address)),
  );
  return localAddresses.has(address);
}

export interface UrlPolicyContext {
  /** Provider kind `local`, or GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS=true. */
  allowPrivate: boolean;
  /** This gateway's own listening port (a loopback target on it is the gateway itself). */
  selfPort: number;
}

export interface UrlVerdict {
  ok: boolean;
  reason?: UrlBlockReason;
  message?: string;
}

const OK: UrlVerdict = { ok: true };

/** Decides whether a resolved address may be connected to. Called after DNS resolution. */
export function checkAddress(rawAddress: string, port: number, ctx: UrlPolicyContext): UrlVerdict {
  const address = normalizeAddress(rawAddress);
  const cls = classifyAddress(address);
  if (cls === 'metadata') return { ok: false, reason: 'url_blocked', message: `provider address ${address} is a cloud-metadata endpoint; refused` };
  if (cls === 'link_local') return { ok: false, reason: 'url_blocked', message: `provider address ${address} is link-local; refused` };
  const local = cls === 'loopback' || cls === 'unspecified' || isLocalInterface(address);
  if (local && port === ctx.selfPort) {
    return { ok: false, reason: 'self_referential', message: `provider URL points back at this gateway (${address}:${port})` };
  }
  if ((cls === 'loopback' || cls === 'unspecified' || cls === 'private') && !ctx.allowPrivate) {
    return {
      ok: false,
      reason: 'private_address',
      message: `provider address ${address} is private or loopback; allowed only for kind=local providers or with GATEWAY_ALLOW_PRIVATE_PROVIDER_URLS=true`,
    };
  }
  return OK;
}

export const defaultPort = (url: URL): number => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

/**
 * The verdict that can be given from the URL alone (IP literals, `localhost`, well-known metadata host names),
 * used by readiness without a DNS round trip. Host names are re-checked at connect time.
 */
export function checkUrlStatically(baseUrl: string, ctx: UrlPolicyContext): UrlVerdict {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return { ok: false, reason: 'url_blocked', message: 'provider base URL is not a valid URL' };
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = defaultPort(url);
  if (host === 'metadata.google.internal' || host === 'metadata') {
    return { ok: false, reason: 'url_blocked', message: `provider host ${host} is a cloud-metadata endpoint; refused` };
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return checkAddress('127.0.0.1', port, ctx);
  if (isIP(host)) return checkAddress(host, port, ctx);
  return OK;
}

/** Outbound requests made for tasks (workspace clones today; agent tools later): the same address rules. */
export interface OutboundPolicy {
  /** GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS: loopback and private addresses allowed (metadata and link-local never). */
  allowPrivate: boolean;
  /** GATEWAY_TASK_HTTP_ALLOWED_HOSTS: when non-empty, the only host names allowed. */
  allowedHosts: string[];
  selfPort: number;
}

export type OutboundVerdict = { ok: true; url: URL; host: string; port: number; address: string } | { ok: false; message: string };

/**
 * Checks an http(s) URL for a task's outbound request: scheme, host allowlist, then every address the name
 * resolves to (a name with one private address is refused). The caller connects to the returned `address`
 * (pinned: no second lookup that a rebinding DNS server could answer differently).
 */
export async function checkOutboundUrl(
  raw: string,
  policy: OutboundPolicy,
  lookup: (host: string) => Promise<string[]> = defaultLookup,
): Promise<OutboundVerdict> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: `${raw} is not a valid URL` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, message: `${url.protocol} URLs are not allowed (only http and https)` };
  if (url.username || url.password) return { ok: false, message: 'URLs must not embed credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = defaultPort(url);
  if (policy.allowedHosts.length > 0 && !policy.allowedHosts.includes(host)) {
    return { ok: false, message: `host ${host} is not in GATEWAY_TASK_HTTP_ALLOWED_HOSTS` };
  }
  if (host === 'metadata.google.internal' || host === 'metadata') return { ok: false, message: `host ${host} is a cloud-metadata endpoint; refused` };
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await lookup(host === 'localhost' || host.endsWith('.localhost') ? '127.0.0.1' : host);
  } catch (err) {
    return { ok: false, message: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  if (addresses.length === 0) return { ok: false, message: `cannot resolve ${host}` };
  for (const a of addresses) {
    const address = normalizeAddress(a);
    const cls = classifyAddress(address);
    if (cls === 'metadata' || cls === 'link_local') return { ok: false, message: `${host} resolves to ${address} (${cls.replace('_', '-')}); refused` };
    const local = cls === 'loopback' || cls === 'unspecified' || isLocalInterface(address);
    if (local && port === policy.selfPort) return { ok: false, message: `${host}:${port} is this gateway; refused` };
    if ((local || cls === 'private') && !policy.allowPrivate) {
      return {
        ok: false,
        message: `${host} resolves to ${address}, a private or loopback address; allowed only with GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS=true`,
      };
    }
  }
  return { ok: true, url, host, port, address: normalizeAddress(addresses[0]) };
}

async function defaultLookup(host: string): Promise<string[]> {
  return (await dnsLookup(host, { all: true, verbatim: true })).map((r) => r.address);
}
