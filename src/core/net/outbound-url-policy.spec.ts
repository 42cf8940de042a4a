import { checkAddress, checkUrlStatically, classifyAddress } from './outbound-url-policy';

const cloud = { allowPrivate: false, selfPort: 8765 };
const local = { allowPrivate: true, selfPort: 8765 };

describe('outbound URL policy', () => {
  it.each([
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.10.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['127.0.0.1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12::1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['8.8.8.8', 'public'],
  ])('classifies %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('always refuses metadata and link-local targets, even for local providers', () => {
    expect(checkAddress('169.254.169.254', 80, local)).toMatchObject({ ok: false, reason: 'url_blocked' });
    expect(checkAddress('fe80::1', 80, local)).toMatchObject({ ok: false, reason: 'url_blocked' });
  });

  it('allows loopback/private only for local providers (or the override)', () => {
    expect(checkAddress('127.0.0.1', 11434, cloud)).toMatchObject({ ok: false, reason: 'private_address' });
    expect(checkAddress('10.0.0.5', 443, cloud)).toMatchObject({ ok: false, reason: 'private_address' });
    expect(checkAddress('127.0.0.1', 11434, local)).toEqual({ ok: true });
    expect(checkAddress('93.184.216.34', 443, cloud)).toEqual({ ok: true });
  });

  it('calls a loopback target on the gateway port self-referential', () => {
    expect(checkAddress('127.0.0.1', 8765, local)).toMatchObject({ ok: false, reason: 'self_referential' });
    expect(checkUrlStatically('http://localhost:8765/v1', local)).toMatchObject({ ok: false, reason: 'self_referential' });
  });

  it('checks IP literals and well-known metadata names statically', () => {
    expect(checkUrlStatically('http://169.254.169.254/latest', local)).toMatchObject({ ok: false, reason: 'url_blocked' });
    expect(checkUrlStatically('http://metadata.google.internal/computeMetadata/v1', local)).toMatchObject({ ok: false, reason: 'url_blocked' });
    expect(checkUrlStatically('https://api.openai.com/v1', cloud)).toEqual({ ok: true });
  });
});
