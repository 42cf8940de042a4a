import { checkAddress, checkOutboundUrl, checkUrlStatically, classifyAddress } from './outbound-url-policy';

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

describe('checkOutboundUrl', () => {
  const policy = { allowPrivate: false, allowedHosts: [] as string[], selfPort: 8765 };
  const resolving = (addresses: string[]) => () => Promise.resolve(addresses);

  it('passes a public name and pins the address it checked', async () => {
    expect(await checkOutboundUrl('https://git.example.com/x.git', policy, resolving(['93.184.216.34']))).toMatchObject({
      ok: true,
      host: 'git.example.com',
      port: 443,
      address: '93.184.216.34',
    });
  });

  it('refuses a name with any private, metadata or link-local address', async () => {
    for (const addresses of [['93.184.216.34', '10.0.0.5'], ['169.254.169.254'], ['fe80::1'], ['::ffff:127.0.0.1']]) {
      expect((await checkOutboundUrl('https://git.example.com/x.git', policy, resolving(addresses))).ok).toBe(false);
    }
  });

  it('allows private addresses only when configured, never this gateway itself or metadata', async () => {
    const open = { ...policy, allowPrivate: true };
    expect((await checkOutboundUrl('http://10.1.2.3/x.git', open)).ok).toBe(true);
    expect((await checkOutboundUrl('http://127.0.0.1:8765/x.git', open)).ok).toBe(false);
    expect((await checkOutboundUrl('http://169.254.169.254/', open)).ok).toBe(false);
  });

  it('refuses other schemes, embedded credentials and hosts outside an allowlist', async () => {
    expect(await checkOutboundUrl('file:///etc/passwd', policy)).toMatchObject({ ok: false });
    expect(await checkOutboundUrl('https://u:p@git.example.com/x', policy)).toMatchObject({ ok: false });
    const listed = { ...policy, allowedHosts: ['git.example.com'] };
    expect(await checkOutboundUrl('https://evil.example.com/x', listed, resolving(['93.184.216.34']))).toMatchObject({ ok: false });
    expect((await checkOutboundUrl('https://git.example.com/x', listed, resolving(['93.184.216.34']))).ok).toBe(true);
  });
});
