import { fetchSiteProblem, hostProblem, mediaTypeProblem, originProblem, type EdgePolicy } from './browser-edge';

const local: EdgePolicy = { localOperator: true, allowedHosts: [], allowedOrigins: [] };
const token: EdgePolicy = { localOperator: false, allowedHosts: [], allowedOrigins: [] };

describe('hostProblem (no token)', () => {
  it('accepts loopback names and addresses with or without a port, and allowlisted names', () => {
    for (const host of ['127.0.0.1:8765', 'localhost', 'LOCALHOST:1', '[::1]:8765', '[::1]', '127.1.2.3']) expect(hostProblem(host, local)).toBeUndefined();
    expect(hostProblem('devbox.lan:8765', { ...local, allowedHosts: ['devbox.lan'] })).toBeUndefined();
    expect(hostProblem('devbox.lan:8765', { ...local, allowedHosts: ['devbox.lan:8765'] })).toBeUndefined();
  });

  it('refuses another name, a look-alike, a missing Host and junk', () => {
    for (const host of [
      'evil.example.com',
      'evil.example.com:8765',
      '127.0.0.1.nip.io',
      '127.0.0.1.evil.example',
      'localhost.evil.example',
      '0.0.0.0',
      '10.0.0.1',
      'user@127.0.0.1',
      '127.0.0.1/x',
      undefined,
    ]) {
      expect(hostProblem(host, local)).toMatch(/not a loopback address/);
    }
    expect(hostProblem('devbox.lan:9999', { ...local, allowedHosts: ['devbox.lan:8765'] })).toMatch(/not a loopback address/);
  });
});

describe('originProblem', () => {
  it('accepts no Origin, the server own origin under any loopback name, and allowlisted origins', () => {
    expect(originProblem(undefined, 'evil.example', token)).toBeUndefined();
    expect(originProblem('http://127.0.0.1:8765', '127.0.0.1:8765', local)).toBeUndefined();
    expect(originProblem('http://localhost:8765', '127.0.0.1:8765', local)).toBeUndefined();
    expect(originProblem('http://[::1]:8765', 'localhost:8765', local)).toBeUndefined();
    expect(originProblem('http://localhost:6274', '127.0.0.1:8765', { ...local, allowedOrigins: ['http://localhost:6274'] })).toBeUndefined();
    expect(originProblem('https://console.example', 'api.example', token)).toMatch(/not this server's origin/);
    expect(originProblem('https://api.example', 'api.example', token)).toBeUndefined();
  });

  it('refuses a foreign, opaque or other-port origin', () => {
    for (const origin of ['https://evil.example', 'http://evil.example:8765', 'null', 'file://', 'http://localhost:6274', 'chrome-extension://abc']) {
      expect(originProblem(origin, '127.0.0.1:8765', local)).toMatch(/not this server's origin/);
    }
    expect(originProblem('http://localhost:8765', '127.0.0.1:8765', token)).toMatch(/not this server's origin/);
  });
});

describe('mediaTypeProblem', () => {
  it('lets reads, JSON bodies and bodiless state changes through', () => {
    expect(mediaTypeProblem('GET', { 'content-type': 'text/plain' })).toBeUndefined();
    expect(mediaTypeProblem('POST', { 'content-type': 'application/json; charset=utf-8', 'content-length': '2' })).toBeUndefined();
    expect(mediaTypeProblem('DELETE', {})).toBeUndefined();
    expect(mediaTypeProblem('POST', { 'content-length': '0' })).toBeUndefined();
  });

  it('refuses forms, text and undeclared bodies on state-changing methods', () => {
    for (const type of [
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/jsonx',
      '',
    ]) {
      expect(mediaTypeProblem('POST', { 'content-type': type, 'content-length': '0' })).toMatch(/not accepted/);
    }
    expect(mediaTypeProblem('PUT', { 'content-length': '5' })).toMatch(/without Content-Type/);
    expect(mediaTypeProblem('PATCH', { 'transfer-encoding': 'chunked' })).toMatch(/without Content-Type/);
  });
});

describe('fetchSiteProblem', () => {
  it('refuses what a browser marks as coming from another site, and nothing else', () => {
    expect(fetchSiteProblem('cross-site')).toMatch(/cross-site/);
    expect(fetchSiteProblem('Same-Site')).toMatch(/same-site/);
    for (const site of [undefined, 'same-origin', 'none']) expect(fetchSiteProblem(site)).toBeUndefined();
  });
});
