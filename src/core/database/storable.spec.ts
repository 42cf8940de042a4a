import { storableJson, storableText, storableValue } from './storable';

describe('storable values', () => {
  it('replaces NUL in text, JSON strings and keys, and leaves an escaped backslash before u0000 alone', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('plain')).toBe('plain');
    expect(JSON.parse(storableJson({ ['k\u0000']: ['x\u0000', '\\u0000', '\\\u0000'] }))).toEqual({ ['k\uFFFD']: ['x\uFFFD', '\\u0000', '\\\uFFFD'] });
    const clean = { a: 1 };
    expect(storableValue(clean)).toBe(clean);
    expect(storableValue({ t: 'a\u0000' })).toEqual({ t: 'a\uFFFD' });
  });
});
