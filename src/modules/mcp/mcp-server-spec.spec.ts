import { redactMcpServers } from '@modules/mcp';
import { resolveSecretMap, scrubSecrets } from './mcp-secrets';
import { envReference, mcpServerEntryProblems, mcpServerProblems, mcpToolAlias, TOOL_NAME } from './mcp-server-spec';

describe('mcpServerProblems', () => {
  it('accepts stdio and Streamable HTTP entries', () => {
    expect(
      mcpServerProblems(
        [
          { name: 'fs', command: 'npx', args: ['-y', 'server'], env: { TOKEN: '$GITHUB_TOKEN', MODE: 'x' }, approval_policy: 'require_approval' },
          { name: 'remote_1', url: 'https://mcp.example.com/mcp', headers: { Authorization: '${API_TOKEN}' }, approval_policy: 'block' },
        ],
        16,
      ),
    ).toEqual([]);
    expect(mcpServerProblems(undefined, 16)).toEqual([]);
  });

  it('names every bad field', () => {
    const problems = mcpServerProblems(
      [
        { name: 'ok', command: 'node' },
        { name: 'no-command', args: ['x'] },
        { name: 'bad name!', url: 'ftp://x' },
        { name: 'both', command: 'a', url: 'http://x' },
        { name: 'ok', command: 'b', env: { '1BAD': 'v', GOOD: 3 }, headers: { a: 'b' }, approval_policy: 'sometimes', extra: true },
        'not an object',
        { command: 'c' },
        { name: 'http', url: 'https://u:p@h/mcp', args: ['x'] },
        { name: 'leak', command: 'd', env: { T: '$GATEWAY_AUTH_TOKEN' } },
      ],
      16,
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'mcp_servers[1].command is required for a stdio server',
        'mcp_servers[2].name must match ^[a-zA-Z0-9_-]{1,64}$',
        'mcp_servers[2].url must be an http or https URL',
        'mcp_servers[3] must set exactly one of command (stdio) or url (Streamable HTTP), not both',
        'mcp_servers[4].name "ok" repeats mcp_servers[0].name; names must be unique',
        'mcp_servers[4].env has an invalid variable name "1BAD"',
        'mcp_servers[4].env.GOOD must be a string',
        'mcp_servers[4].headers is only for a Streamable HTTP server (url)',
        'mcp_servers[4].approval_policy must be one of auto, require_approval, block',
        expect.stringMatching(/^mcp_servers\[4\]\.extra is not a known field/),
        'mcp_servers[5] must be an object',
        'mcp_servers[6].name is required',
        'mcp_servers[7].url must not embed credentials (use headers)',
        'mcp_servers[7].args is only for a stdio server (command)',
        'mcp_servers[8].env.T refers to $GATEWAY_AUTH_TOKEN, a gateway setting that MCP servers may not read',
      ]),
    );
    expect(mcpServerProblems('x', 16)).toEqual(['mcp_servers must be an array']);
    expect(mcpServerEntryProblems({ name: 'probe' }, 'mcp_server')).toEqual(['mcp_server must set command (stdio server) or url (Streamable HTTP server)']);
    expect(mcpServerEntryProblems({ name: 'probe', headers: {} }, 'mcp_server')).toEqual(['mcp_server.url is required for a Streamable HTTP server']);
  });

  it('caps the number of servers (0 = no cap)', () => {
    const list = Array.from({ length: 3 }, (_, i) => ({ name: `s${i}`, command: 'x' }));
    expect(mcpServerProblems(list, 2)).toEqual(['mcp_servers has 3 entries; at most 2 are allowed (GATEWAY_TASK_MAX_MCP_SERVERS_PER_TASK)']);
    expect(mcpServerProblems(list, 0)).toEqual([]);
  });

  it('never quotes a value back', () => {
    const problems = mcpServerProblems([{ name: 'x', command: 'c', env: { 'BAD NAME': 'super-secret-value' } }], 16).join('\n');
    expect(problems).not.toContain('super-secret-value');
  });
});

describe('secrets', () => {
  it('recognises $NAME and ${NAME} references only as whole values', () => {
    expect(envReference('$TOKEN')).toBe('TOKEN');
    expect(envReference('${TOKEN}')).toBe('TOKEN');
    expect(envReference('Bearer $TOKEN')).toBeNull();
    expect(envReference('$')).toBeNull();
  });

  it('resolves references, keeps literals, and names a missing variable without its value', () => {
    expect(resolveSecretMap('s', 'env', { A: '$X', B: 'lit' }, { X: 'xv' })).toEqual({ A: 'xv', B: 'lit' });
    expect(() => resolveSecretMap('s', 'headers', { Authorization: '$MISSING' }, {})).toThrow(
      'MCP server "s": headers.Authorization refers to $MISSING, which is not set in the worker\'s environment',
    );
    expect(() => resolveSecretMap('s', 'env', { A: '$DATABASE_URL' }, { DATABASE_URL: 'postgres://secret' })).toThrow(/gateway setting/);
  });

  it('scrubs secret values from diagnostics', () => {
    expect(scrubSecrets('token=abcd1234 failed', ['abcd1234', 'xy'])).toBe('token=[redacted] failed');
  });
});

describe('redactMcpServers', () => {
  it('replaces every env and headers value, keeping keys and everything else', () => {
    expect(
      redactMcpServers([
        { name: 'a', command: 'c', args: ['x'], env: { TOKEN: 'literal', REF: '$VAR' } },
        { name: 'b', url: 'https://h/mcp', headers: { Authorization: 'Bearer x' }, approval_policy: 'block' },
        { name: 'c', command: 'd' },
      ]),
    ).toEqual([
      { name: 'a', command: 'c', args: ['x'], env: { TOKEN: '[redacted]', REF: '[redacted]' } },
      { name: 'b', url: 'https://h/mcp', headers: { Authorization: '[redacted]' }, approval_policy: 'block' },
      { name: 'c', command: 'd' },
    ]);
  });
});

it('aliases tools as mcp__<server>__<tool>, made a valid, stable, distinct function name when the tool name is not one', () => {
  expect(mcpToolAlias('fs', 'read_text_file')).toBe('mcp__fs__read_text_file');
  const dotted = mcpToolAlias('gh', 'repos.list/all files');
  expect(dotted).toMatch(/^mcp__gh__repos_list_all_files_[0-9a-f]{8}$/);
  expect(dotted).toMatch(TOOL_NAME);
  expect(mcpToolAlias('gh', 'repos.list/all files')).toBe(dotted);
  expect(mcpToolAlias('gh', 'repos_list/all files')).not.toBe(dotted);
  const long = mcpToolAlias('a'.repeat(40), 'b'.repeat(80));
  expect(long).toHaveLength(64);
  expect(long).toMatch(TOOL_NAME);
  expect(mcpToolAlias('a'.repeat(40), `${'b'.repeat(80)}x`)).not.toBe(long);
});
