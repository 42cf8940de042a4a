import { parseArguments, stepOutput, toolKind, toolLocations, toolTitle } from './tool-calls';

describe('ACP tool-call cards of agent-loop tools', () => {
  it('kinds: reads, searches, edits, commands, fetches; MCP and unknown tools are other', () => {
    expect(['read_file', 'grep', 'file_edit', 'shell_exec', 'http_request', 'git_status', 'mcp__fs__read'].map(toolKind)).toEqual([
      'read',
      'search',
      'edit',
      'execute',
      'fetch',
      'read',
      'other',
    ]);
  });

  it('titles name what the call does, MCP tools with their server, long ones cut', () => {
    expect(toolTitle('file_write', { path: 'a/b.ts' })).toBe('Write a/b.ts');
    expect(toolTitle('shell_exec', { command: 'npm test' })).toBe('Run `npm test`');
    expect(toolTitle('git_exec', { command: 'git log -1' })).toBe('git log -1');
    expect(toolTitle('grep', { pattern: 'TODO', path: 'src' })).toBe('Search for TODO in src');
    expect(toolTitle('http_request', { url: 'https://example.com' })).toBe('GET https://example.com');
    expect(toolTitle('mcp__editor_tools__echo', { message: 'x' })).toBe('echo (MCP editor_tools)');
    const long = toolTitle('shell_exec', { command: 'x'.repeat(500) });
    expect(long).toHaveLength(200);
    expect(long.endsWith('…')).toBe(true);
  });

  it('locations are absolute in the editor cwd; arguments parse from JSON text or pass through as objects', () => {
    expect(toolLocations({ path: 'src/a.ts' }, '/work/p')).toEqual([{ path: '/work/p/src/a.ts' }]);
    expect(toolLocations({ path: '/etc/hosts' }, '/work/p')).toEqual([{ path: '/etc/hosts' }]);
    expect(toolLocations({ command: 'ls' }, '/work/p')).toEqual([]);
    expect(parseArguments('{"path":"a"}')).toEqual({ path: 'a' });
    expect(parseArguments({ path: 'a' })).toEqual({ path: 'a' });
    expect(parseArguments('not json')).toEqual({});
    expect(parseArguments('[1]')).toEqual({});
  });

  it("a step's output is the text the model got back, with its error flag", () => {
    const step = { id: 's', kind: 'tool', status: 'failed', result: JSON.stringify({ text: 'exit code 2', is_error: true }), exit_code: 2 };
    expect(stepOutput(step, 'tool.failed')).toEqual({ text: 'exit code 2', isError: true, exitCode: 2 });
    expect(stepOutput({ id: 's', kind: 'tool', status: 'failed', error: 'policy blocked' }, 'tool.failed')).toMatchObject({
      text: 'policy blocked',
      isError: true,
    });
    expect(stepOutput(undefined, 'tool.completed')).toMatchObject({ text: 'tool.completed', isError: true });
  });
});
