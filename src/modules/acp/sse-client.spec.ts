import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { followSse, sseMessages } from './sse-client';

const body = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
      c.close();
    },
  });

const all = async (b: ReadableStream<Uint8Array>) => {
  const out = [];
  for await (const m of sseMessages(b)) out.push(m);
  return out;
};

describe('sseMessages', () => {
  it('frames split anywhere across chunks, multi-line data, CRLF; heartbeat comments are skipped', async () => {
    const text = ': heartbeat\n\nid: 1\nevent: snapshot\ndata: {"a":\ndata: 1}\n\r\nid: 2\r\ndata: é\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    // Every split point, including inside the two-byte "é".
    for (let i = 1; i < bytes.length; i++) {
      const b = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(bytes.subarray(0, i));
          c.enqueue(bytes.subarray(i));
          c.close();
        },
      });
      expect(await all(b)).toEqual([
        { id: '1', event: 'snapshot', data: '{"a":\n1}' },
        { id: '2', data: 'é' },
      ]);
    }
  });

  it('an unterminated last block is not delivered', async () => {
    expect(await all(body('data: whole\n\n', 'data: cut'))).toEqual([{ data: 'whole' }]);
  });
});

describe('followSse', () => {
  let server: Server;
  let url: string;
  const seen: Array<string | undefined> = [];

  beforeAll(async () => {
    // First connection: one event, then the connection drops. Later ones: resume after Last-Event-ID, then `done`.
    server = createServer((req, res) => {
      const last = req.headers['last-event-id'] as string | undefined;
      seen.push(last);
      if (req.url === '/refused') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { type: 'not_found', message: 'no such run' } }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (!last) {
        res.write('id: 1\ndata: one\n\n');
        setTimeout(() => res.destroy(), 20);
      } else {
        res.write(`id: ${Number(last) + 1}\ndata: after ${last}\n\n`);
        res.end('event: done\ndata: {}\n\n');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => (seen.length = 0));

  const httpError = async (res: Response) => new Error(`status ${res.status}: ${await res.text()}`);

  it('reconnects after a dropped connection with Last-Event-ID, so nothing is missed or repeated', async () => {
    const got: string[] = [];
    for await (const m of followSse({ url: `${url}/stream`, headers: {}, signal: new AbortController().signal, httpError })) {
      got.push(m.event ?? m.data);
      if (m.event === 'done') break;
    }
    expect(got).toEqual(['one', 'after 1', 'done']);
    expect(seen).toEqual([undefined, '1']);
  });

  it('a 4xx answer stops it at once with the server error', async () => {
    const read = async () => {
      for await (const _ of followSse({ url: `${url}/refused`, headers: {}, signal: new AbortController().signal, httpError })) {
        // nothing arrives
      }
    };
    await expect(read()).rejects.toThrow('status 404: {"error":{"type":"not_found","message":"no such run"}}');
    expect(seen).toHaveLength(1);
  });
});
