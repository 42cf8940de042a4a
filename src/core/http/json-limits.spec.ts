import { jsonDepthExceeds, mayHoldNul, nulInUrl, nulPath } from './json-limits';
import { toDomainError } from './error-rendering';

const nest = (n: number): string => '['.repeat(n) + ']'.repeat(n);

describe('json-limits', () => {
  it('measures nesting of objects and arrays, not brackets inside strings', () => {
    expect(jsonDepthExceeds(nest(128), 128)).toBe(false);
    expect(jsonDepthExceeds(nest(129), 128)).toBe(true);
    expect(jsonDepthExceeds(`{"a":${nest(127)}}`, 128)).toBe(false);
    expect(jsonDepthExceeds(`{"a":${nest(128)}}`, 128)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ s: '['.repeat(1000) }), 128)).toBe(false);
    // Escaped quotes do not end a string; an escaped backslash before a quote does.
    expect(jsonDepthExceeds(JSON.stringify({ s: `\\"${'{'.repeat(500)}` }), 128)).toBe(false);
    expect(jsonDepthExceeds(`{"s":"\\\\","t":${nest(200)}}`, 128)).toBe(true);
  });

  it('finds a NUL in strings and keys by path, and tells it from an escaped backslash', () => {
    const text = JSON.stringify({ messages: [{ role: 'user', content: 'a\u0000b' }] });
    expect(mayHoldNul(text)).toBe(true);
    expect(nulPath(JSON.parse(text))).toBe('messages[0].content');
    expect(nulPath({ ['k\u0000']: 1 })).toBe('k\\u0000');
    const literal = JSON.stringify({ s: '\\u0000' });
    expect(mayHoldNul(literal)).toBe(true);
    expect(nulPath(JSON.parse(literal))).toBeUndefined();
  });

  it('names where a URL carries %00', () => {
    expect(nulInUrl('/hecate/v1/tasks/abc?x=1')).toBeUndefined();
    expect(nulInUrl('/hecate/v1/tasks/a%00b')).toBe('path');
    expect(nulInUrl('/hecate/v1/usage/events?limit=5&provider=a%00b')).toBe('provider');
    expect(nulInUrl('/x?a%00=1')).toBe('query');
  });
});

describe('database errors reaching the HTTP filter', () => {
  it('answers values Postgres cannot store 400 and lost connections 503 with Retry-After', () => {
    for (const code of ['22021', '22P05'])
      expect(toDomainError(Object.assign(new Error('bad'), { code })).domain).toMatchObject({ status: 400, type: 'invalid_request' });
    const lost = toDomainError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
    expect(lost).toMatchObject({ internal: false, domain: { status: 503, type: 'service_unavailable', headers: { 'retry-after': '1' } } });
    expect(toDomainError(new Error('Connection terminated unexpectedly')).domain.status).toBe(503);
    expect(toDomainError(new Error('something else')).domain.status).toBe(500);
  });
});
