// The agent loop the plain and DBOS contenders run (bench/durable/loop-child.mjs): the same requests Hecate's
// agent_loop sends (OpenAI chat completions, streamed, with Hecate's 11 built-in tool schemas) and the same two
// file operations, with each model call and each tool call passed through `step` — a plain call, or DBOS.runStep.
// `tools` are the schemas as the build's agent loop offers them (bench/durable/run.mjs reads them from dist).
import { readFile, writeFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

/** Folds one streamed choice delta into the assistant message being built (content and tool calls by index). */
function fold(message, delta) {
  if (delta.content) message.content = (message.content ?? '') + delta.content;
  for (const t of delta.tool_calls ?? []) {
    message.tool_calls ??= [];
    const call = (message.tool_calls[t.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
    if (t.id) call.id = t.id;
    if (t.function?.name) call.function.name += t.function.name;
    if (t.function?.arguments) call.function.arguments += t.function.arguments;
  }
}

/** One streamed chat completion: the assistant message it assembles (SSE `data:` frames until `[DONE]`). */
export async function callModel(modelUrl, messages, tools) {
  const res = await fetch(`${modelUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench-model', messages, tools, stream: true, stream_options: { include_usage: true } }),
  });
  if (!res.ok) throw new Error(`model server answered ${res.status}`);
  const message = { role: 'assistant', content: null };
  for (const frame of (await res.text()).split('\n\n')) {
    const data = frame.startsWith('data: ') ? frame.slice(6) : '';
    if (!data || data === '[DONE]') continue;
    const chunk = JSON.parse(data);
    for (const choice of chunk.choices) fold(message, choice.delta ?? {});
  }
  return message;
}

/** read_file and file_write inside the workspace (the only tools the scripted model calls); other tools answer an error. */
export async function runTool(workspace, call) {
  const args = JSON.parse(call.function.arguments || '{}');
  const path = resolve(workspace, String(args.path ?? ''));
  if (!path.startsWith(workspace + sep)) return `error: ${args.path} is outside the workspace`;
  if (call.function.name === 'read_file') return readFile(path, 'utf8');
  if (call.function.name === 'file_write') {
    await writeFile(path, String(args.content ?? ''));
    return `wrote ${Buffer.byteLength(String(args.content ?? ''))} bytes to ${args.path}`;
  }
  return `error: ${call.function.name} is not available in this bench`;
}

/**
 * The loop: a model call, then each tool call it asked for, until an answer without tool calls. `step(name, fn)`
 * runs each call (a plain call, or a durable step). Returns the number of model calls.
 */
export async function agentLoop({ modelUrl, workspace, tools, prompt, step }) {
  const messages = [
    { role: 'system', content: 'You are a coding agent working in a workspace.' },
    { role: 'user', content: prompt },
  ];
  for (let turns = 1; ; turns++) {
    const message = await step('model', () => callModel(modelUrl, messages, tools));
    messages.push(message);
    if (!message.tool_calls?.length) return turns;
    for (const call of message.tool_calls) {
      const content = await step(call.function.name, () => runTool(workspace, call));
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
}
