import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigValidationError, loadConfig } from '@core/config/config.loader';
import { secretReferenceAllowed, secretRefusals, stdioNetwork, unlistedStdioServers } from './mcp-policy';

describe('MCP walls: settings and policy (issue 26)', () => {
  it('defaults: no stdio command for API keys, only HECATE_MCP_SECRET_* references, 60 s idle limit, 10 MiB messages', () => {
    const c = loadConfig({}).mcp;
    expect(c).toMatchObject({ stdioAllow: [], idleTimeoutMs: 60_000, maxMessageBytes: 10 * 1024 * 1024 });
    expect(
      unlistedStdioServers(
        [
          { name: 'a', command: 'node', args: ['x.js'] },
          { name: 'remote', url: 'https://x/mcp' },
        ],
        c,
      ),
    ).toEqual(['a']);
    for (const name of ['ANTHROPIC_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'PGPASSWORD', 'DATABASE_URL', 'GATEWAY_AUTH_TOKEN', 'HOME', 'HECATE_OTHER'])
      expect({ name, ok: secretReferenceAllowed(name, c) }).toEqual({ name, ok: false });
    expect(secretReferenceAllowed('HECATE_MCP_SECRET_GITHUB', c)).toBe(true);
  });

  it('matches command exactly and arguments whole; network only when the entry grants it', () => {
    const c = loadConfig({
      GATEWAY_MCP_STDIO_ALLOW: JSON.stringify([
        { command: '/usr/bin/node', args: '/srv/mcp/fs\\.js( --root [a-z/]+)?' },
        { command: '/usr/bin/uvx', args: 'mcp-server-fetch', network: true },
      ]),
    }).mcp;
    const ok = [
      { name: 'fs', command: '/usr/bin/node', args: ['/srv/mcp/fs.js'] },
      { name: 'fs2', command: '/usr/bin/node', args: ['/srv/mcp/fs.js', '--root', '/data'] },
      { name: 'fetch', command: '/usr/bin/uvx', args: ['mcp-server-fetch'] },
    ];
    const bad = [
      { name: 'name-only', command: 'node', args: ['/srv/mcp/fs.js'] },
      { name: 'suffix', command: '/usr/bin/node', args: ['/srv/mcp/fs.js', '-e', 'x'] },
      { name: 'newline', command: '/usr/bin/node', args: ['/srv/mcp/fs.js\n-e'] },
      { name: 'prefix', command: '/usr/bin/node', args: ['x /srv/mcp/fs.js'] },
    ];
    expect(unlistedStdioServers([...ok, ...bad], c)).toEqual(bad.map((b) => b.name));
    expect(ok.map((s) => stdioNetwork(s, c))).toEqual([false, false, true]);
  });

  it('reads the allowlist from a file and refuses a malformed one, naming the entry', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mcp-allow-')), 'allow.json');
    writeFileSync(file, JSON.stringify([{ command: '/bin/x' }]));
    expect(loadConfig({ GATEWAY_MCP_STDIO_ALLOW: file }).mcp.stdioAllow).toHaveLength(1);
    let error: ConfigValidationError | undefined;
    try {
      loadConfig({ GATEWAY_MCP_STDIO_ALLOW: JSON.stringify([{ command: '' }, { command: 'a', args: '(' }, { command: 'b', network: 'yes' }]) });
    } catch (err) {
      error = err as ConfigValidationError;
    }
    expect(error?.problems).toEqual([
      'GATEWAY_MCP_STDIO_ALLOW[0].command must be a non-empty string',
      expect.stringMatching(/^GATEWAY_MCP_STDIO_ALLOW\[1\]\.args is not a valid regular expression/),
      'GATEWAY_MCP_STDIO_ALLOW[2].network must be true or false',
    ]);
  });

  it('lists every reference nobody allowlisted, by name; an operator list adds names and prefixes but never a gateway setting', () => {
    const c = loadConfig({ GATEWAY_MCP_SECRET_ENV_ALLOW: 'GITHUB_TOKEN,ACME_*,GATEWAY_AUTH_TOKEN,DATABASE_URL' }).mcp;
    const refused = secretRefusals(
      [
        { name: 'a', command: 'x', env: { A: '$GITHUB_TOKEN', B: '${ACME_KEY}', C: '$GATEWAY_AUTH_TOKEN', D: 'literal', E: '$DATABASE_URL' } },
        { name: 'b', url: 'https://x/mcp', headers: { Authorization: '$PGPASSWORD' } },
      ],
      c,
    );
    expect(refused).toEqual([
      { server: 'a', field: 'env', key: 'C', variable: 'GATEWAY_AUTH_TOKEN' },
      { server: 'a', field: 'env', key: 'E', variable: 'DATABASE_URL' },
      { server: 'b', field: 'headers', key: 'Authorization', variable: 'PGPASSWORD' },
    ]);
  });
});
