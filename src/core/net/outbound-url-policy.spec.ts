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

describe('IPv6 addresses that embed an IPv4 address', () => {
  it.each([
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::a00:1', 'private'],
    ['::a9fe:a9fe', 'metadata'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::c0a8:101', 'private'],
    ['64:ff9b::a9fe:a01', 'link_local'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1::808:808', 'private'],
    ['64:ff9b:1::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:0a00:0001::1', 'private'],
    ['2002:808:808::1', 'public'],
    ['2001:0:7f00:1::', 'loopback'],
    ['2001:0:808:808::80ff:fefe', 'loopback'],
    ['2001:0:808:808:0:0:5601:5601', 'metadata'],
    ['2001:0:808:808::f7f7:f7f7', 'public'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['fe80::1%eth0', 'link_local'],
    ['fec0::1', 'private'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::0.0.0.1', 'loopback'],
    ['2606:4700::1111', 'public'],
  ])('classifies %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('refuses such literals in URLs as it refuses the IPv4 address they carry', async () => {
    const policy = { allowPrivate: false, allowedHosts: [] as string[], selfPort: 8765 };
    for (const url of [
      'http://[::ffff:127.0.0.1]:6379/',
      'http://[::ffff:7f00:1]:5432/',
      'http://[64:ff9b::7f00:1]:8080/',
      'http://[::ffff:a9fe:a9fe]/latest/meta-data',
      'http://[64:ff9b::a9fe:a9fe]/latest/meta-data',
      'http://[2002:a9fe:a9fe::]/',
      'http://[::127.0.0.1]/',
      'http://[2001:0:808:808::80ff:fefe]/',
    ]) {
      expect({ url, ok: (await checkOutboundUrl(url, policy)).ok }).toEqual({ url, ok: false });
    }
    expect(checkUrlStatically('http://[::ffff:a9fe:a9fe]/', local)).toMatchObject({ ok: false, reason: 'url_blocked' });
    expect(checkUrlStatically('http://[64:ff9b::7f00:1]:11434/', cloud)).toMatchObject({ ok: false, reason: 'private_address' });
    expect(checkUrlStatically('http://[::ffff:7f00:1]:8765/', local)).toMatchObject({ ok: false, reason: 'self_referential' });
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
