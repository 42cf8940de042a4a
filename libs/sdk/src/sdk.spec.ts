import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HecateClient } from './client';
import { HecateError } from './errors';
import { LiveReply } from './live-reply';
import { readSseFrames } from './sse';

/** A body that arrives in the given chunks. */
const chunked = (parts: string[]): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(new TextEncoder().encode(p));
      controller.close();
    },
  });

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('readSseFrames', () => {
  it('reads frames split anywhere, CR, LF and CRLF line ends, comments, multi-line data and retry', async () => {
    const text = ': ping\r\n\r\nid: 1\r\nevent: snapshot\r\ndata: {"a":\r\ndata: 1}\r\n\r\nretry: 1000\nevent: reconnect\ndata: {}\n\ndata: plain\r\r';
    // Every split point, including between the CR and LF of a CRLF.
    for (let cut = 0; cut <= text.length; cut++) {
      const frames = await collect(readSseFrames(chunked([text.slice(0, cut), text.slice(cut)])));
      expect(frames).toEqual([
        { id: '1', event: 'snapshot', data: '{"a":\n1}' },
        { id: undefined, event: 'reconnect', data: '{}', retry: 1000 },
        { id: undefined, event: 'message', data: 'plain' },
      ]);
    }
  });

  it('reports every chunk, heartbeats included, so a silent connection can be told from a live one', async () => {
    let chunks = 0;
    await collect(readSseFrames(chunked([': ping\n\n', ': ping\n\n', 'data: x\n\n']), () => chunks++));
    expect(chunks).toBe(3);
  });

  it('a frame split inside a multi-byte character, and an unterminated last frame is not delivered', async () => {
    const bytes = new TextEncoder().encode('id: 2\r\ndata: é\r\n\r\ndata: cut');
    for (let i = 1; i < bytes.length; i++) {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(bytes.subarray(0, i));
          c.enqueue(bytes.subarray(i));
          c.close();
        },
      });
      expect(await collect(readSseFrames(body))).toEqual([{ id: '2', event: 'message', data: 'é' }]);
    }
  });
});

/** A real HTTP server whose handler sees every request (method, path, body) in order. */
async function server(
  handler: (req: IncomingMessage, body: string, res: ServerResponse, n: number) => void,
): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const srv: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      handler(req, body, res, seen.length);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((r) => srv.close(() => r())),
  };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const envelope = (type: string) => ({
  error: { type, message: `${type} happened`, user_message: 'Short.', operator_action: 'Do this.', request_id: 'req_1', trace_id: 'tr_1', task_id: 'task_9' },
});

describe('HecateClient', () => {
  const fast = { initialDelayMs: 1, maxDelayMs: 5 };

  it('throws the error envelope as a HecateError carrying status, type, message, request_id and operator_action', async () => {
    const s = await server((_req, _body, res) => json(res, 404, envelope('not_found')));
    const hecate = new HecateClient({ baseUrl: s.url, apiKey: 'k', retry: fast });
    const err = (await hecate.get('/hecate/v1/tasks/{task_id}', { path: { task_id: 'task_1' } }).catch((e: unknown) => e)) as HecateError;
    expect(err).toBeInstanceOf(HecateError);
    expect({ status: err.status, type: err.type, message: err.message, request_id: err.request_id, operator_action: err.operator_action }).toEqual({
      status: 404,
      type: 'not_found',
      message: 'not_found happened',
      request_id: 'req_1',
      operator_action: 'Do this.',
    });
    expect(err.body?.task_id).toBe('task_9');
    expect(s.seen).toEqual(['GET /hecate/v1/tasks/task_1 ']);
    await s.close();
  });

  it('retries a GET after a 503 and a dropped connection, honouring Retry-After', async () => {
    const s = await server((req, _body, res, n) => {
      if (n === 1) return json(res, 503, envelope('service_unavailable'), { 'retry-after': '0' });
      if (n === 2) return req.socket.destroy();
      json(res, 200, { object: 'tasks', data: [] });
    });
    const hecate = new HecateClient({ baseUrl: s.url, retry: fast });
    await expect(hecate.get('/hecate/v1/tasks', { query: { limit: 5 } })).resolves.toEqual({ object: 'tasks', data: [] });
    expect(s.seen).toHaveLength(3);
    expect(s.seen[0]).toBe('GET /hecate/v1/tasks?limit=5 ');
    await s.close();
  });

  it('retries a POST that takes client_request_id with the same id, and never repeats one that does not', async () => {
    const s = await server((req, _body, res, n) => {
      if (n === 1) return req.socket.destroy();
      json(res, 200, { object: 'chat_session_turn', data: { session_id: 'chat_1' } });
    });
    const hecate = new HecateClient({ baseUrl: s.url, retry: fast });
    await hecate.post('/hecate/v1/chat/sessions/{session_id}/messages', { path: { session_id: 'chat_1' }, body: { content: 'hi' } });
    const ids = s.seen.map((line) => (JSON.parse(line.slice(line.indexOf('{'))) as { client_request_id?: string }).client_request_id);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).toBe(ids[0]);

    s.seen.length = 0;
    const dropping = await server((req) => req.socket.destroy());
    const other = new HecateClient({ baseUrl: dropping.url, retry: fast });
    const err = (await other.post('/hecate/v1/tasks', { body: { shell_command: 'true' } }).catch((e: unknown) => e)) as HecateError;
    expect({ status: err.status, type: err.type }).toEqual({ status: 0, type: 'network_error' });
    expect(dropping.seen).toHaveLength(1);
    await Promise.all([s.close(), dropping.close()]);
  });

  it('retries any POST on 429 (refused before acting) and gives up after its retries', async () => {
    const s = await server((_req, _body, res) => json(res, 429, envelope('rate_limit_exceeded'), { 'retry-after': '0' }));
    const hecate = new HecateClient({ baseUrl: s.url, retry: { ...fast, retries: 2 } });
    const err = (await hecate.post('/hecate/v1/tasks', { body: {} }).catch((e: unknown) => e)) as HecateError;
    expect({ status: err.status, type: err.type }).toEqual({ status: 429, type: 'rate_limit_exceeded' });
    expect(s.seen).toHaveLength(3);
    await s.close();
  });
});

describe('LiveReply over the agent-chat stream', () => {
  const sse = (res: ServerResponse, frames: Array<{ id?: string; event: string; data: unknown }>, end = true) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const f of frames) res.write(`${f.id ? `id: ${f.id}\n` : ''}event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);
    if (end) res.end();
    else setTimeout(() => res.socket?.destroy(), 50);
  };
  const snapshot = { event: 'snapshot', data: { object: 'agent_chat_session', data: { id: 's1', active_turn: { id: 'turn1', stream_id: 'turn1' } } } };

  it('drops what a reset discards, across a reconnection that resumes after the reset, and ends on the stored text', async () => {
    const cursors: Array<string | undefined> = [];
    const s = await server((req, _body, res, n) => {
      cursors.push(req.headers['last-event-id'] as string | undefined);
      if (n === 1) {
        // A taken-over turn answered anew: the partial (1, 2), the reset, then the connection drops.
        return sse(
          res,
          [
            snapshot,
            { id: 'turn1:turn1:1', event: 'delta', data: { content: 'echo: par' } },
            { id: 'turn1:turn1:2', event: 'delta', data: { content: 'tial' } },
            { id: 'turn1:turn1:3', event: 'reset', data: { type: 'reset', from_index: 1, reason: 'restarted' } },
          ],
          false,
        );
      }
      sse(res, [
        snapshot,
        { id: 'turn1:turn1:4', event: 'delta', data: { content: 'echo: ' } },
        { id: 'turn1:turn1:5', event: 'delta', data: { content: 'fresh' } },
        { event: 'message', data: { id: 'msg_2', role: 'assistant', content: 'echo: fresh', status: 'completed' } },
        { event: 'done', data: { object: 'agent_chat_session', data: { id: 's1', active_turn: null } } },
      ]);
    });
    const hecate = new HecateClient({ baseUrl: s.url, retry: { initialDelayMs: 1, maxDelayMs: 5 } });
    const reply = new LiveReply();
    const shown: string[] = [];
    for await (const frame of hecate.streams.agentChat('s1')) {
      shown.push(`${frame.event}:${reply.apply(frame)}`);
    }
    expect(shown).toEqual([
      'snapshot:',
      'delta:echo: par',
      'delta:echo: partial',
      'reset:',
      'snapshot:',
      'delta:echo: ',
      'delta:echo: fresh',
      'message:echo: fresh',
      'done:echo: fresh',
    ]);
    // The resumed connection starts after the reset: a client that resumes later got it once, before the new deltas.
    expect(cursors).toEqual([undefined, 'turn1:turn1:3']);
    await s.close();
  });

  it('a reset after a lost buffer drops the persisted partial a fallback message showed; one from a later index keeps what precedes it', () => {
    const reply = new LiveReply();
    reply.apply({ event: 'message', data: { role: 'assistant', content: 'partial from Postgres', resume_fallback: true } as never });
    reply.apply({ event: 'reset', id: 'turn1:turn1.2:1', data: { type: 'reset', from_index: 1, reason: 'restarted' } });
    expect(reply.apply({ event: 'delta', id: 'turn1:turn1.2:2', data: { content: 'anew' } })).toBe('anew');

    const run = new LiveReply();
    run.apply({ event: 'delta', id: 'run1:run1:1', data: { content: 'first call. ' } });
    run.apply({ event: 'delta', id: 'run1:run1:2', data: { content: 'second, cut' } });
    expect(run.apply({ event: 'reset', id: 'run1:run1:3', data: { type: 'reset', from_index: 2, reason: 'restarted' } })).toBe('first call. ');
  });
});

describe('HecateStreams.live', () => {
  let srv: Awaited<ReturnType<typeof server>>;
  const lastIds: Array<string | undefined> = [];

  beforeAll(async () => {
    // First connection: two frames, then the connection drops. Later ones: one repeated frame, the next, then `done`.
    srv = await server((req, _body, res) => {
      const last = req.headers['last-event-id'] as string | undefined;
      lastIds.push(last);
      if (req.url?.includes('/runs/gone/')) return json(res, 404, { error: { type: 'not_found', message: 'no such run' } });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (!last) {
        res.write(': ok\n\nid: 1\nevent: delta\ndata: {"content":"a"}\n\nid: 2\nevent: tool_progress\ndata: {"tool_call_id":"c1","text":"out"}\n\n');
        setTimeout(() => res.destroy(), 20);
      } else {
        res.write(`id: ${last}\nevent: delta\ndata: {"content":"again"}\n\n`);
        res.write(`id: ${Number(last) + 1}\nevent: delta\ndata: {"content":"b"}\n\n`);
        res.end('event: done\ndata: {"run_id":"r1","status":"completed"}\n\n');
      }
    });
  });
  afterAll(() => srv.close());
  beforeEach(() => (lastIds.length = 0));

  const client = () => new HecateClient({ baseUrl: srv.url, reconnect: { initialDelayMs: 1, maxDelayMs: 5 } });

  it('reconnects after a dropped connection with Last-Event-ID = the last index, so nothing is missed or repeated', async () => {
    expect(await collect(client().streams.live('t1', 'r1'))).toEqual([
      { event: 'delta', id: 1, data: { content: 'a' } },
      { event: 'tool_progress', id: 2, data: { tool_call_id: 'c1', text: 'out' } },
      { event: 'delta', id: 3, data: { content: 'b' } },
      { event: 'done', data: { run_id: 'r1', status: 'completed' } },
    ]);
    expect(lastIds).toEqual([undefined, '2']);
  });

  it('a 4xx answer stops it at once with the server error', async () => {
    const read = collect(client().streams.live('t1', 'gone'));
    await expect(read).rejects.toBeInstanceOf(HecateError);
    await expect(read).rejects.toMatchObject({ status: 404, type: 'not_found', message: 'no such run' });
    expect(lastIds).toHaveLength(1);
  });
});
