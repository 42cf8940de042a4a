import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { AcpConfig } from './acp-config';
import { type Acp, loadAcpSdk } from './acp-sdk';
import { EditorSession, RunFailedError, SessionBusyError } from './editor-session';
import { apiFailure, callOptions, type HecateClient, HecateError, hecateClient, type McpServerEntry } from './hecate-client';
import type { EditorChannel } from './run-follower';

type Sdk = typeof Acp;

const MCP_NAME = /[^a-zA-Z0-9_-]/g;

/**
 * Hecate as an ACP agent (docs/design.md §12): an editor launches `npm run acp` and speaks ACP v1 over its stdio; each
 * editor session is an EditorSession over the `/hecate/v1` API of the server at HECATE_BASE_URL. Resolves when the
 * editor closes the connection. Only protocol frames go to `output`.
 */
export async function serveAcp(config: AcpConfig, io: { input: Readable; output: Writable }, log: Logger, version: string): Promise<void> {
  const acp = await loadAcpSdk();
  const api = hecateClient(config.baseUrl, config.apiKey);
  const sessions = new Map<string, EditorSession>();
  const session = (id: string): EditorSession => {
    const s = sessions.get(id);
    if (!s) throw acp.RequestError.sessionNotFound(id);
    return s;
  };
  const app = acp
    .agent({ name: 'hecate' })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        // A session is one durable task (its client_ref is the session id): an editor restarted anywhere resumes it
        // (session/resume); replaying the conversation (session/load) is not offered.
        loadSession: false,
        sessionCapabilities: { resume: {}, close: {} },
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        // The task's MCP client speaks stdio and Streamable HTTP (not the legacy SSE transport).
        mcpCapabilities: { http: true, sse: false },
      },
      // The credential is HECATE_API_KEY in the agent's environment: nothing to negotiate.
      authMethods: [],
      agentInfo: { name: 'hecate', title: 'Hecate', version },
    }))
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      const s = await newSession(acp, api, config, log, params);
      sessions.set(s.id, s);
      return { sessionId: s.id };
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params }) => {
      if (!sessions.has(params.sessionId)) sessions.set(params.sessionId, await resumeSession(acp, api, config, log, params));
      return {};
    })
    .onRequest(acp.methods.agent.session.close, ({ params }) => {
      const s = session(params.sessionId);
      // The run in flight is cancelled; the task (the conversation) stays, to be resumed later.
      s.cancel();
      sessions.delete(s.id);
      log.info({ session_id: s.id, task_id: s.task }, 'editor session closed');
      return {};
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client, signal }) => {
      const s = session(params.sessionId);
      const text = promptText(params.prompt);
      if (!text.trim()) throw acp.RequestError.invalidParams(undefined, 'the prompt has no text');
      const editor: EditorChannel = {
        update: (update) => client.notify(acp.methods.client.session.update, { sessionId: s.id, update }),
        // On session/cancel the editor should answer `cancelled`; one that never does must not hold the prompt open.
        requestPermission: async (toolCall, options, cancel) => {
          try {
            const answer = await client.request(
              acp.methods.client.session.requestPermission,
              { sessionId: s.id, toolCall, options },
              { cancellationSignal: cancel, stopWaitingOnCancel: true },
            );
            return answer.outcome;
          } catch (err) {
            if (cancel.aborted) return { outcome: 'cancelled' };
            throw err;
          }
        },
      };
      try {
        return { stopReason: await s.prompt(text, editor, signal) };
      } catch (err) {
        log.warn({ session_id: s.id, task_id: s.task, err: err instanceof Error ? err.message : String(err) }, 'prompt failed');
        throw toRequestError(acp, err, config.baseUrl);
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.cancel();
    });
  const connection = app.connect(
    acp.ndJsonStream(Writable.toWeb(io.output) as WritableStream<Uint8Array>, Readable.toWeb(io.input) as ReadableStream<Uint8Array>),
  );
  await connection.closed;
}

/** `session/new`: a session in `cwd` (its task is created by the first prompt), the saved agent checked. */
async function newSession(acp: Sdk, api: HecateClient, config: AcpConfig, log: Logger, params: Acp.NewSessionRequest): Promise<EditorSession> {
  if (!isAbsolute(params.cwd)) throw acp.RequestError.invalidParams({ cwd: params.cwd }, 'cwd must be an absolute path');
  const mcpServers = mcpServersOf(acp, params.mcpServers);
  // A saved agent: the session's `_meta.agent_id`, else HECATE_AGENT_ID; an unknown one fails here.
  const meta = params._meta?.agent_id;
  if (meta !== undefined && (typeof meta !== 'string' || !meta)) throw acp.RequestError.invalidParams({ agent_id: meta }, '_meta.agent_id must be an agent id');
  const agentId = meta ?? config.agentId;
  await checkAccess(api, agentId).catch((err: unknown) => {
    throw toRequestError(acp, err, config.baseUrl);
  });
  const s = new EditorSession(`hecate-${randomUUID()}`, params.cwd, mcpServers, api, { ...config, agentId }, log);
  log.info({ session_id: s.id, cwd: s.cwd, mcp_servers: mcpServers.map((m) => m.name), agent_id: agentId }, 'editor session opened');
  return s;
}

/**
 * `session/resume` of a session this process never saw (the editor restarted): its task found by the session id (its
 * `client_ref`), the next prompt continuing the task's latest run. The same `cwd` only.
 */
async function resumeSession(acp: Sdk, api: HecateClient, config: AcpConfig, log: Logger, params: Acp.ResumeSessionRequest): Promise<EditorSession> {
  if (!isAbsolute(params.cwd)) throw acp.RequestError.invalidParams({ cwd: params.cwd }, 'cwd must be an absolute path');
  if (!SESSION_ID.test(params.sessionId)) throw acp.RequestError.sessionNotFound(params.sessionId);
  const found = await sessionTask(api, params.sessionId).catch((err: unknown) => {
    throw toRequestError(acp, err, config.baseUrl);
  });
  if (found && found.working_directory !== params.cwd)
    throw acp.RequestError.invalidParams({ cwd: params.cwd }, `session ${params.sessionId} works in ${found.working_directory}, not ${params.cwd}`);
  const agentId = found?.agent_id ?? config.agentId;
  const s = new EditorSession(params.sessionId, params.cwd, mcpServersOf(acp, params.mcpServers ?? []), api, { ...config, agentId }, log);
  // Nothing stored yet (no prompt before the editor went away): it goes on as the empty session it was.
  if (found) s.adopt(found.id, found.latest_run_id ?? null);
  log.info({ session_id: s.id, task_id: found?.id ?? null }, 'editor session resumed');
  return s;
}

/** The ids session/new hands out (`hecate-<uuid>`): only those are resumed. */
const SESSION_ID = /^hecate-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The session's task (the newest with its id as `client_ref`), or null when it never had a prompt. */
async function sessionTask(api: HecateClient, sessionId: string) {
  const { data } = await api.get('/hecate/v1/tasks', { query: { client_ref: sessionId, limit: 1 }, ...callOptions() });
  return data[0] ?? null;
}

/**
 * A cheap authenticated read at session/new: is the server there, does it take the credential, and (404 otherwise)
 * does the credential's tenant have the saved agent?
 */
async function checkAccess(api: HecateClient, agentId: string | undefined): Promise<void> {
  if (agentId) await api.get('/hecate/v1/agents/{agent_id}', { path: { agent_id: agentId }, ...callOptions() });
  else await api.get('/hecate/v1/tasks', { query: { limit: 1 }, ...callOptions() });
}

/**
 * The editor's MCP servers as the task's `mcp_servers`: stdio → command/args/env, HTTP → url/headers,
 * names made valid (`^[a-zA-Z0-9_-]{1,64}$`) and unique. They run on the Hecate worker, not in the editor.
 */
export function mcpServersOf(acp: Sdk, servers: Acp.McpServer[]): McpServerEntry[] {
  const taken = new Set<string>();
  return servers.map((server, i) => {
    let name = server.name.replace(MCP_NAME, '_').slice(0, 60) || `mcp_${i}`;
    while (taken.has(name)) name = `${name.slice(0, 60)}_${i}`;
    taken.add(name);
    if ('type' in server && server.type === 'sse') {
      throw acp.RequestError.invalidParams({ mcpServer: server.name }, 'MCP servers over SSE are not supported (mcpCapabilities.sse is false)');
    }
    if ('url' in server) {
      const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
      return { name, url: server.url, ...(server.headers.length > 0 ? { headers } : {}) };
    }
    const env = Object.fromEntries(server.env.map((e) => [e.name, e.value]));
    return { name, command: server.command, ...(server.args.length > 0 ? { args: server.args } : {}), ...(server.env.length > 0 ? { env } : {}) };
  });
}

/** The prompt's text: text blocks as they are, embedded files as fenced context, links by their URI. */
export function promptText(blocks: Acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text') parts.push(b.text);
    else if (b.type === 'resource_link') parts.push(`[${b.name}](${b.uri})`);
    else if (b.type === 'resource' && 'text' in b.resource) parts.push(`Context from ${b.resource.uri}:\n\`\`\`\n${b.resource.text}\n\`\`\``);
  }
  return parts.join('\n\n');
}

/**
 * An ACP error for what went wrong: a rejected credential → -32000 (auth required); a failed run or an API refusal →
 * -32603 with `data.type` = the Hecate error type (the run's `error_kind`, or the envelope's `type`).
 */
export function toRequestError(acp: Sdk, err: unknown, baseUrl: string): Acp.RequestError {
  if (err instanceof acp.RequestError) return err;
  if (err instanceof SessionBusyError) return acp.RequestError.invalidRequest(undefined, err.message);
  if (err instanceof RunFailedError) {
    return new acp.RequestError(-32603, err.message, {
      type: err.run.error_kind || 'run_failed',
      task_id: err.run.task_id,
      run_id: err.run.id,
      message: err.run.last_error,
    });
  }
  if (err instanceof HecateError) {
    const failure = apiFailure(err, baseUrl);
    const data = { type: failure.type, status: failure.status, message: failure.message, ...(failure.requestId ? { request_id: failure.requestId } : {}) };
    if (failure.status === 401 || failure.status === 403) return acp.RequestError.authRequired(data, failure.message);
    return new acp.RequestError(-32603, `Hecate: ${failure.message}`, data);
  }
  return acp.RequestError.internalError({ type: 'gateway_error', message: err instanceof Error ? err.message : String(err) });
}
