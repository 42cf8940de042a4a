import { spawn } from 'node:child_process';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { builtEntry } from '../../support/server-process';
import type { Json } from '../tasks/tasks-harness';

export { McpClient };

/** The tools issue 17 asks for. */
export const TOOLS = [
  'list_chat_sessions',
  'get_chat_session',
  'list_tasks',
  'create_task',
  'start_task',
  'get_run',
  'list_run_events',
  'cancel_run',
  'list_pending_approvals',
  'resolve_approval',
  'send_agent_chat_message',
];

export const TERMINAL = ['completed', 'failed', 'cancelled', 'timed_out'];

/**
 * A real MCP client on `<server>/mcp` with a bearer credential (none: no header). It lists the tools once, so every
 * callTool below is checked by the client against the tool's output schema.
 */
export async function connect(serverUrl: string, token?: string): Promise<McpClient> {
  const client = new McpClient({ name: 'hecate-e2e', version: '1.0.0' });
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${serverUrl}/mcp`), { requestInit: { headers } }));
  await client.listTools();
  return client;
}

/** The structured result of a tool that must succeed (its text content is the same JSON). */
export async function call(client: McpClient, name: string, args: Json = {}): Promise<Json> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
  return r.structuredContent as Json;
}

/** The /hecate/v1 error body (`error`) of a tool that must fail with `isError: true`. */
export async function fail(client: McpClient, name: string, args: Json = {}): Promise<Json> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect({ tool: name, isError: r.isError }).toEqual({ tool: name, isError: true });
  expect(r.structuredContent).toBeUndefined();
  return JSON.parse((r.content[0] as { text: string }).text).error as Json;
}

/** Reads a resource's JSON text. */
export async function readJson(client: McpClient, uri: string): Promise<Json> {
  const { contents } = await client.readResource({ uri });
  expect(contents).toHaveLength(1);
  expect(contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
  return JSON.parse((contents[0] as { text: string }).text) as Json;
}

/** A raw JSON-RPC POST to /mcp (for status codes a client library hides). */
export async function rawPost(serverUrl: string, body: Json, headers: Record<string, string> = {}) {
  const res = await fetch(`${serverUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Json) : {} };
}

/** Runs the stdio relay until it exits on its own (or is killed after `timeoutMs`): its exit code and both streams. */
export function runRelay(env: Record<string, string>, timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [builtEntry('main.mcp.js')], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
