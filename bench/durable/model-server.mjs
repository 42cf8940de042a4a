#!/usr/bin/env node
/**
 * The scripted model server of bench/durable, in its own process so its CPU can be counted apart: OpenAI chat
 * completions, streamed, answering at once. The user prompt names the run's length, `turns=N` (default 3): with k tool
 * results in the request it answers a `read_file` call of notes.txt while k < N − 2, a `file_write` call of out.txt
 * (content naming the prompt's `tag=…`) when k = N − 2, and a final text answer after that — so a run is exactly N
 * model calls. `GET /stats` returns what it has served (responses, the tools each request offered, request bytes).
 * Prints `{"port":…}` as its first stdout line.
 */
import { createServer } from 'node:http';

const served = { responses: 0, tools_min: Infinity, tools_max: 0, request_bytes: 0 };
let n = 0;

/** What the model answers to a request: a tool call or a final answer, by the prompt and the tool results so far. */
function script(body) {
  const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const turns = Number(/turns=(\d+)/.exec(prompt)?.[1] ?? 3);
  const tag = /tag=(\S+)/.exec(prompt)?.[1] ?? 'untagged';
  const results = body.messages.filter((m) => m.role === 'tool').length;
  if (results < turns - 2) return { name: 'read_file', arguments: JSON.stringify({ path: 'notes.txt' }) };
  if (results === turns - 2) return { name: 'file_write', arguments: JSON.stringify({ path: 'out.txt', content: `summary of the notes (${tag})\n` }) };
  return null;
}

function answer(res, body) {
  const id = `chatcmpl-${++n}`;
  const frame = (choices, extra = {}) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices, ...extra })}\n\n`;
  const call = script(body);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (call) {
    res.write(
      frame([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: call }] }, finish_reason: null }]),
    );
    res.write(frame([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]));
  } else {
    res.write(frame([{ index: 0, delta: { role: 'assistant', content: 'Done: the notes are summarised in out.txt.' }, finish_reason: null }]));
    res.write(frame([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  }
  res.write(frame([], { usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } }));
  res.end('data: [DONE]\n\n');
  served.responses += 1;
}

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/stats') return res.end(JSON.stringify(served));
    return res.end(JSON.stringify({ object: 'list', data: [{ id: 'bench-model', object: 'model', created: 0, owned_by: 'bench' }] }));
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const body = JSON.parse(raw.toString('utf8'));
    const tools = body.tools?.length ?? 0;
    served.tools_min = Math.min(served.tools_min, tools);
    served.tools_max = Math.max(served.tools_max, tools);
    served.request_bytes += raw.length;
    answer(res, body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
