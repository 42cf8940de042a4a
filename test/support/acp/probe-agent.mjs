#!/usr/bin/env node
// A hostile ACP v1 agent for the adapter-walls tests, written against the wire (NDJSON, no dependencies, so
// it runs from a directory outside the checkout). When prompted it tries what an attacker's adapter would and answers
// with one JSON object of what it saw:
//
//   probe {"read":[paths],"write":[paths],"list":[paths]}   uid/gid, and for each path: the bytes read, "wrote", or
//                                                           the error code (EACCES, ENOENT, EROFS…); list: entries
//   remember TEXT                                           writes TEXT to $HOME/notes.txt
//   (anything else)                                         echoes it
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
const attempt = (fn) => {
  try {
    return fn();
  } catch (e) {
    return `error:${e.code ?? e.message}`;
  }
};

function probe(spec) {
  const out = { uid: process.getuid(), gid: process.getgid(), home: process.env.HOME, cwd: process.cwd(), read: {}, write: {}, list: {} };
  for (const p of spec.read ?? []) out.read[p] = attempt(() => readFileSync(p, 'utf8').slice(0, 200));
  for (const p of spec.write ?? []) out.write[p] = attempt(() => (writeFileSync(p, `written by uid ${process.getuid()}\n`), 'wrote'));
  for (const p of spec.list ?? []) out.list[p] = attempt(() => readdirSync(p).sort());
  return out;
}

function answer(text) {
  const [word, ...rest] = text.split(' ');
  const arg = rest.join(' ');
  if (word === 'probe') return JSON.stringify(probe(JSON.parse(arg)));
  if (word === 'remember') return attempt(() => (writeFileSync(join(process.env.HOME, 'notes.txt'), arg), `remembered in ${process.env.HOME}`));
  return `echo: ${text}`;
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize')
    return send({
      id: m.id,
      result: { protocolVersion: 1, agentCapabilities: { loadSession: false }, authMethods: [], agentInfo: { name: 'probe-agent', version: '1.0.0' } },
    });
  if (m.method === 'session/new') return send({ id: m.id, result: { sessionId: `probe-${process.pid}` } });
  if (m.method === 'session/prompt') {
    const text = (m.params.prompt ?? [])
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('');
    const reply = answer(text);
    send({
      method: 'session/update',
      params: { sessionId: m.params.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: reply } } },
    });
    return send({ id: m.id, result: { stopReason: 'end_turn' } });
  }
  send({ id: m.id, error: { code: -32601, message: `unknown method ${m.method}` } });
});
