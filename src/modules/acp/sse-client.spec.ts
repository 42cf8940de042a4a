import { sseMessages } from './sse-client';

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
