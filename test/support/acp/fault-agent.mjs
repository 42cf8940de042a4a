#!/usr/bin/env node
// A small ACP v1 agent built with @agentclientprotocol/sdk, for the external-agent tests: it does what each prompt
// says, so a test can make a turn stream text, ask permission, write a file in its workspace, crash, print garbage,
// send a huge update or never answer.
//
//   fault-agent.mjs [--version] [--no-load] [--resume] [--auth-required] [--stdout-banner]
//
// Prompts (the first word decides; the default echoes):
//   echo TEXT         streams "echo: TEXT" in three chunks, then end_turn
//   write FILE TEXT   asks permission (kind edit), on allow writes TEXT to FILE in the session's cwd, then end_turn
//   writejson JSON    like write, for files named by the keys of a JSON object (any name: quotes, spaces, tabs…)
//   run CMD           asks permission (kind execute); on allow reports the command as completed
//   slow MS TEXT      streams TEXT one character every MS ms (cancel stops it: stopReason cancelled)
//   crash             streams one chunk, then exits 3
//   garbage           writes a line that is not JSON to stdout, then keeps going
//   huge MB           sends one agent_message_chunk of MB megabytes
//   hang              never answers the prompt
//   pid               answers with its process id (a test can see which process served the turn)
//   history           answers with the prompts this native session has seen (survives session/load)
//
// Sessions are kept in $HOME/.fault-agent/sessions.json so a restarted process can session/load them (unless --no-load),
// and session/resume them with --resume (sessionCapabilities.resume).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';

const args = new Set(process.argv.slice(2));
if (args.has('--version')) {
  console.log('fault-agent 1.4.2');
  process.exit(0);
}
const canLoad = !args.has('--no-load');
const canResume = args.has('--resume');
if (args.has('--stdout-banner')) process.stdout.write('fault agent starting\n');

const stateDir = join(process.env.HOME || '/tmp', '.fault-agent');
const stateFile = join(stateDir, 'sessions.json');
const load = () => (existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : {});
const save = (s) => {
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(stateFile, JSON.stringify(s));
};
const sessions = load();
const cancelled = new Set();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const chunk = (client, sessionId, text) =>
  client.notify(acp.methods.client.session.update, { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });

async function ask(client, sessionId, toolCallId, title, kind) {
  await client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: 'tool_call', toolCallId, title, kind, status: 'pending' },
  });
  const r = await client.request(acp.methods.client.session.requestPermission, {
    sessionId,
    toolCall: { toolCallId, title, kind },
    options: [
      { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
      { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
      { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
    ],
  });
  return r.outcome.outcome === 'selected' && r.outcome.optionId.startsWith('allow') ? r.outcome.optionId : null;
}

async function toolDone(client, sessionId, toolCallId, status, text) {
  await client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: 'tool_call_update', toolCallId, status, content: [{ type: 'content', content: { type: 'text', text } }] },
  });
}

const app = acp
  .agent({ name: 'fault-agent' })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: canLoad, ...(canResume ? { sessionCapabilities: { resume: {} } } : {}) },
    authMethods: [],
    agentInfo: { name: 'fault-agent', version: '1.4.2' },
  }))
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    if (args.has('--auth-required')) throw acp.RequestError.authRequired();
    const sessionId = `fault-${process.pid}-${Date.now().toString(36)}`;
    sessions[sessionId] = { cwd: params.cwd, prompts: [] };
    save(sessions);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.load, ({ params }) => {
    if (!canLoad || !sessions[params.sessionId]) throw acp.RequestError.sessionNotFound(params.sessionId);
    sessions[params.sessionId].cwd = params.cwd;
    return {};
  })
  .onRequest(acp.methods.agent.session.resume, ({ params }) => {
    if (!canResume || !sessions[params.sessionId]) throw acp.RequestError.sessionNotFound(params.sessionId);
    sessions[params.sessionId].cwd = params.cwd;
    return {};
  })
  .onRequest(acp.methods.agent.session.close, ({ params }) => {
    delete sessions[params.sessionId];
    save(sessions);
    return {};
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    cancelled.add(params.sessionId);
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId } = params;
    const session = sessions[sessionId];
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    cancelled.delete(sessionId);
    const text = params.prompt
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('\n')
      .trim();
    session.prompts.push(text);
    save(sessions);
    const [word, ...rest] = text.split(/\s+/);
    switch (word) {
      case 'write': {
        const [file, ...body] = rest;
        const allowed = await ask(client, sessionId, 'call_write', `Write ${file}`, 'edit');
        if (cancelled.has(sessionId)) return { stopReason: 'cancelled' };
        if (allowed) {
          writeFileSync(join(session.cwd, file), body.join(' ') + '\n');
          await toolDone(client, sessionId, 'call_write', 'completed', `wrote ${file}`);
          await chunk(client, sessionId, `wrote ${file}`);
        } else {
          await toolDone(client, sessionId, 'call_write', 'failed', 'permission denied');
          await chunk(client, sessionId, `not allowed to write ${file}`);
        }
        return { stopReason: 'end_turn' };
      }
      case 'writejson': {
        const files = JSON.parse(text.slice('writejson'.length).trim());
        const allowed = await ask(client, sessionId, 'call_write', `Write ${Object.keys(files).length} files`, 'edit');
        if (cancelled.has(sessionId)) return { stopReason: 'cancelled' };
        if (allowed) for (const [file, body] of Object.entries(files)) writeFileSync(join(session.cwd, file), body);
        await toolDone(client, sessionId, 'call_write', allowed ? 'completed' : 'failed', allowed ? 'wrote' : 'permission denied');
        await chunk(client, sessionId, allowed ? `wrote ${Object.keys(files).length} files` : 'not allowed');
        return { stopReason: 'end_turn' };
      }
      case 'run': {
        const allowed = await ask(client, sessionId, 'call_run', `Run ${rest.join(' ')}`, 'execute');
        if (cancelled.has(sessionId)) return { stopReason: 'cancelled' };
        await toolDone(client, sessionId, 'call_run', allowed ? 'completed' : 'failed', allowed ? 'ran' : 'denied');
        await chunk(client, sessionId, allowed ? `ran ${rest.join(' ')}` : 'command denied');
        return { stopReason: 'end_turn' };
      }
      case 'slow': {
        const [ms, ...body] = rest;
        for (const c of body.join(' ')) {
          if (cancelled.has(sessionId)) return { stopReason: 'cancelled' };
          await chunk(client, sessionId, c);
          await sleep(Number(ms));
        }
        return { stopReason: cancelled.has(sessionId) ? 'cancelled' : 'end_turn' };
      }
      case 'crash':
        await chunk(client, sessionId, 'about to crash');
        await sleep(50);
        process.exit(3);
        break;
      case 'garbage':
        process.stdout.write('this is not json\n');
        await sleep(5000);
        return { stopReason: 'end_turn' };
      case 'huge':
        await chunk(client, sessionId, 'x'.repeat(Number(rest[0] || 50) * 1024 * 1024));
        return { stopReason: 'end_turn' };
      case 'hang':
        await new Promise(() => undefined);
        break;
      case 'pid':
        await chunk(client, sessionId, `pid ${process.pid}`);
        return { stopReason: 'end_turn' };
      case 'history':
        await chunk(client, sessionId, `history: ${session.prompts.slice(0, -1).join(' | ')}`);
        return { stopReason: 'end_turn' };
      default: {
        const reply = `echo: ${text}`;
        const third = Math.ceil(reply.length / 3);
        for (let i = 0; i < reply.length; i += third) await chunk(client, sessionId, reply.slice(i, i + third));
        return { stopReason: 'end_turn' };
      }
    }
    return { stopReason: 'end_turn' };
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
