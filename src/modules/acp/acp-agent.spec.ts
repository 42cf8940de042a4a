import { mcpServersOf, promptText, toRequestError } from './acp-agent';
import { loadAcpSdk } from './acp-sdk';
import { RunFailedError } from './editor-session';
import { HecateError } from './hecate-client';

const BASE_URL = 'http://127.0.0.1:8765';

describe('ACP ↔ Hecate shapes', () => {
  it("the editor's MCP servers become the task's mcp_servers: stdio and HTTP mapped, names made valid and unique, SSE refused", async () => {
    const acp = await loadAcpSdk();
    expect(
      mcpServersOf(acp, [
        { name: 'my tools', command: 'node', args: ['s.js'], env: [{ name: 'TOKEN', value: 'v' }] },
        { type: 'http', name: 'my tools', url: 'https://mcp.example/mcp', headers: [{ name: 'authorization', value: 'Bearer t' }] },
        { name: 'bare', command: 'srv', args: [], env: [] },
      ]),
    ).toEqual([
      { name: 'my_tools', command: 'node', args: ['s.js'], env: { TOKEN: 'v' } },
      { name: 'my_tools_1', url: 'https://mcp.example/mcp', headers: { authorization: 'Bearer t' } },
      { name: 'bare', command: 'srv' },
    ]);
    expect(() => mcpServersOf(acp, [{ type: 'sse', name: 'old', url: 'http://x/sse', headers: [] }])).toThrow(/SSE are not supported/);
  });

  it("the prompt's text: text as is, embedded files fenced with their URI, links by URI", () => {
    expect(
      promptText([
        { type: 'text', text: 'Fix this' },
        { type: 'resource', resource: { uri: 'file:///p/a.ts', text: 'const a = 1;' } },
        { type: 'resource_link', name: 'b.ts', uri: 'file:///p/b.ts' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ]),
    ).toBe('Fix this\n\nContext from file:///p/a.ts:\n```\nconst a = 1;\n```\n\n[b.ts](file:///p/b.ts)');
  });

  it('errors: a failed run carries its error kind as data.type; a refused credential is auth required', async () => {
    const acp = await loadAcpSdk();
    const failed = toRequestError(
      acp,
      new RunFailedError({ id: 'run_1', task_id: 'task_1', status: 'failed', error_kind: 'budget_exceeded', last_error: 'spent' }),
      BASE_URL,
    );
    expect(failed).toMatchObject({ code: -32603, data: { type: 'budget_exceeded', run_id: 'run_1', task_id: 'task_1', message: 'spent' } });
    const auth = toRequestError(acp, new HecateError({ status: 401, type: 'unauthorized', message: 'invalid API key', requestId: 'req_1' }), BASE_URL);
    expect(auth).toMatchObject({ code: -32000, data: { type: 'unauthorized', request_id: 'req_1' } });
    expect(toRequestError(acp, new HecateError({ status: 422, type: 'model_not_configured', message: 'no model' }), BASE_URL)).toMatchObject({
      code: -32603,
      data: { type: 'model_not_configured' },
    });
  });
});
