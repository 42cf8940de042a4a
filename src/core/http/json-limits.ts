/**
 * Ingress limits on what a client's JSON and URL may contain, checked before anything else touches them: nesting
 * deeper than MAX_JSON_DEPTH (recursive code downstream — serialisers, validators, translators — would overflow the
 * stack), and NUL characters (Postgres refuses them in text and jsonb, so they could only ever fail later).
 */
export const MAX_JSON_DEPTH = 128;

const NUL = String.fromCharCode(0);

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;

/** True when the JSON text nests objects/arrays deeper than `max` (brackets inside strings do not count). */
export function jsonDepthExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Jump to the closing quote: one that is not escaped (preceded by an even number of backslashes).
      for (;;) {
        const close = text.indexOf('"', i + 1);
        if (close === -1) return false; // unterminated: JSON.parse reports it
        let backslashes = 0;
        for (let k = close - 1; text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
        i = close;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Could the JSON text hold a NUL (`\u0000`)? A cheap test before the exact walk of `nulPath`. */
export const mayHoldNul = (text: string): boolean => text.includes('\\u0000');

/** The path (`messages[0].content`) of the first string or key holding U+0000 in a parsed JSON value, if any. */
export function nulPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? path || '(body)' : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (key.includes(NUL)) return at.split(NUL).join('\\u0000');
      const found = nulPath(v, at);
      if (found) return found;
    }
  }
  return undefined;
}

/** `%00` or a raw NUL in a URL. */
const hasNul = (s: string): boolean => s.includes(NUL) || s.includes('%00');

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

/** Where a raw request URL carries a NUL: `path`, or the name of the query parameter; undefined when clean. */
export function nulInUrl(url: string): string | undefined {
  if (!hasNul(url)) return undefined;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (hasNul(path)) return 'path';
  for (const pair of url.slice(q + 1).split('&')) {
    if (!hasNul(pair)) continue;
    const eq = pair.indexOf('=');
    const name = safeDecode(eq === -1 ? pair : pair.slice(0, eq));
    return name.includes(NUL) ? 'query' : name;
  }
  return 'query';
}
