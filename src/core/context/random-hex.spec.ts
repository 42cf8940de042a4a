import { randomHex } from './random-hex';

describe('randomHex', () => {
  it('returns 2 hex characters per byte, different every time, across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = randomHex(16);
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2000);
    expect(randomHex(5000)).toHaveLength(10000);
  });
});
