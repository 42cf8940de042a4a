import { isIPv6 } from 'node:net';

/** An IPv6 address as its 16 bytes (zone id dropped, an embedded dotted quad read), or null when it is not one. */
export function ipv6Bytes(raw: string): number[] | null {
  const address = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!isIPv6(address)) return null;
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = groups(tail);
  const words = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  if (words.length !== 8) return null;
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

const dotted = (b: number[]): string => b.join('.');
const zero = (b: number[], from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);

/**
 * The IPv4 addresses an IPv6 address carries and that a connection to it may end up reaching: IPv4-mapped
 * (`::ffff:0:0/96`), IPv4-translated (`::ffff:0:0:0/96`), IPv4-compatible (`::/96`), NAT64 (`64:ff9b::/96`, and the
 * local-use `64:ff9b:1::/48` read as /96), 6to4 (`2002::/16`) and Teredo (`2001::/32`, its server and its
 * obfuscated client). Empty for any other address (and for `::` and `::1` themselves).
 */
export function embeddedIPv4(raw: string): string[] {
  const b = ipv6Bytes(raw);
  if (!b) return [];
  const low = b.slice(12, 16);
  if (zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return [dotted(low)];
  if (zero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zero(b, 10, 12)) return [dotted(low)];
  if (zero(b, 0, 12)) return zero(b, 12, 15) && b[15] <= 1 ? [] : [dotted(low)];
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && (zero(b, 4, 12) || (b[4] === 0 && b[5] === 1))) return [dotted(low)];
  if (b[0] === 0x20 && b[1] === 0x02) return [dotted(b.slice(2, 6))];
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [dotted(b.slice(4, 8)), dotted(low.map((x) => x ^ 0xff))];
  return [];
}

/** `64:ff9b:1::/48`: a network-local NAT64 prefix (RFC 8215), private whatever it embeds. */
export function isLocalNat64(raw: string): boolean {
  const b = ipv6Bytes(raw);
  return b !== null && b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b[4] === 0 && b[5] === 1;
}

/** `::ffff:a.b.c.d` in any spelling (`::ffff:7f00:1` too): the IPv4 address itself, which is what a connection reaches. */
export function mappedIPv4(raw: string): string | null {
  const b = ipv6Bytes(raw);
  return b && zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff ? dotted(b.slice(12, 16)) : null;
}
