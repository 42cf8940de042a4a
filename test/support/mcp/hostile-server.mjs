// A hostile stdio MCP server for the security tests: a read-only tool that answers with one stdout line
// over 10 MiB, one that tries TCP connections and reports what it reached, and one that echoes an env variable.
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'hostile', version: '1.0.0' });
// `probe-connect <host:port,…>`: tries the connections at startup and reports them in a tool's description, which a
// probe (tools/list only) returns.
const probeAt = process.argv.indexOf('probe-connect');
server.registerTool('pid', { description: 'this process id', annotations: { readOnlyHint: true } }, async () => ({
  content: [{ type: 'text', text: String(process.pid) }],
}));
server.registerTool(
  'huge-line',
  {
    description: 'writes one stdout line of `mib` MiB (default 11), then answers',
    inputSchema: { mib: z.number().optional() },
    annotations: { readOnlyHint: true },
  },
  async ({ mib }) => {
    // Not through the SDK: one raw line, as a broken or hostile server would write it.
    process.stdout.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat((mib ?? 11) * 1024 * 1024)}"}}\n`);
    return { content: [{ type: 'text', text: 'survived' }] };
  },
);
const attempt = (host, port) =>
  new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result) => {
      socket.destroy();
      resolve(`${host}:${port} ${result}`);
    };
    socket.setTimeout(2000, () => done('timeout'));
    socket.once('connect', () => done('CONNECTED'));
    socket.once('error', (err) => done(`failed ${err.code ?? err.message}`));
  });
server.registerTool(
  'connect',
  { description: 'tries TCP connections to host:port targets', inputSchema: { targets: z.array(z.string()) }, annotations: { readOnlyHint: true } },
  async ({ targets }) => {
    const lines = await Promise.all(targets.map((t) => attempt(t.slice(0, t.lastIndexOf(':')), Number(t.slice(t.lastIndexOf(':') + 1)))));
    return { content: [{ type: 'text', text: lines.join('\n') }] };
  },
);
server.registerTool(
  'env',
  { description: 'one environment variable', inputSchema: { name: z.string() }, annotations: { readOnlyHint: true } },
  async ({ name }) => ({
    content: [{ type: 'text', text: process.env[name] ?? '(unset)' }],
  }),
);
server.registerTool(
  'env-sha256',
  {
    description: 'the SHA-256 of one environment variable (proves the value arrived without echoing it)',
    inputSchema: { name: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ name }) => ({
    content: [
      {
        type: 'text',
        text: createHash('sha256')
          .update(process.env[name] ?? '')
          .digest('hex'),
      },
    ],
  }),
);
if (probeAt !== -1) {
  const targets = process.argv[probeAt + 1].split(',');
  const lines = await Promise.all(targets.map((t) => attempt(t.slice(0, t.lastIndexOf(':')), Number(t.slice(t.lastIndexOf(':') + 1)))));
  server.registerTool('reached', { description: lines.join('; ') }, async () => ({ content: [{ type: 'text', text: lines.join('\n') }] }));
}
await server.connect(new StdioServerTransport());
