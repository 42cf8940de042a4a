// An MCP stdio server that, before it answers anything, tries to reach what argv[2] lists (JSON: [{name, via, host,
// port, send} | {name, via: 'fetch', url}]) and reports what it got as the description of its one tool, `report`.
// `direct`: a TCP connection; `proxy`: a CONNECT through $HTTP_PROXY; `fetch`: Node's fetch (which honours the proxy
// variables with NODE_USE_ENV_PROXY=1, tunnelling plain HTTP too). Each result is `open: <first bytes>`, `refused: <why>` or `status <code>: <body>`.
import { connect } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const TIMEOUT_MS = 3000;

function exchange(socket, send, preface) {
  return new Promise((resolve) => {
    let data = '';
    let phase = preface ? 'preface' : 'body';
    const done = (r) => {
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done(data ? `open: ${data.slice(0, 120)}` : 'refused: timeout'), TIMEOUT_MS);
    socket.on('error', (e) => {
      clearTimeout(timer);
      done(data && phase === 'body' ? `open: ${data.slice(0, 120)}` : `refused: ${e.code ?? e.message}`);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      done(phase === 'body' && data ? `open: ${data.slice(0, 120)}` : `refused: ${data.split('\r\n')[0] || 'closed'}`);
    });
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (phase === 'preface' && data.includes('\r\n\r\n')) {
        if (!/^HTTP\/1\.[01] 200/.test(data)) return done(`refused: ${data.split('\r\n')[0]}`);
        phase = 'body';
        data = '';
        socket.write(send);
        return;
      }
      if (phase === 'body' && data.length >= 4) {
        clearTimeout(timer);
        done(`open: ${data.slice(0, 120)}`);
      }
    });
    if (preface) socket.write(preface);
    else socket.write(send);
  });
}

async function attempt(t) {
  try {
    if (t.via === 'fetch') {
      const r = await fetch(t.url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
      return `status ${r.status}: ${(await r.text()).slice(0, 120)}`;
    }
    if (t.via === 'direct') return await exchange(connect(t.port, t.host), t.send);
    const proxy = process.env.HTTP_PROXY ? new URL(process.env.HTTP_PROXY) : null;
    if (!proxy) return 'refused: no proxy';
    const target = `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
    return await exchange(connect(Number(proxy.port), proxy.hostname), t.send, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  } catch (e) {
    return `refused: ${e.cause?.cause?.message ?? e.cause?.message ?? e.cause?.code ?? e.message}`;
  }
}

const targets = JSON.parse(process.argv[2] ?? '[]');
const results = Object.fromEntries(await Promise.all(targets.map(async (t) => [t.name, await attempt(t)])));
const server = new McpServer({ name: 'egress-prober', version: '1.0.0' });
server.registerTool('report', { description: JSON.stringify(results) }, async () => ({ content: [{ type: 'text', text: JSON.stringify(results) }] }));
await server.connect(new StdioServerTransport());
