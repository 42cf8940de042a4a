import { PassThrough } from 'node:stream';
import { ChunkReader } from './chunk-reader';

const b = (s: string) => Buffer.from(s);

describe('ChunkReader', () => {
  it('reads with next() and then pumps the rest in order', async () => {
    const body = new PassThrough();
    const reader = new ChunkReader(body);
    body.write(b('a'));
    expect((await reader.next())?.toString()).toBe('a');
    body.write(b('b'));
    body.write(b('c'));
    const seen: string[] = [];
    const done = reader.pump((c) => {
      seen.push(c.toString());
      return true;
    });
    body.write(b('d'));
    body.end();
    await done;
    expect(seen).toEqual(['b', 'c', 'd']);
    await expect(reader.next()).resolves.toBeUndefined();
  });

  it('pauses the body while the sink is full, until resume()', async () => {
    const body = new PassThrough();
    const reader = new ChunkReader(body);
    const seen: string[] = [];
    const done = reader.pump((c) => {
      seen.push(c.toString());
      return false;
    });
    body.write(b('1'));
    await new Promise((r) => setImmediate(r));
    expect(body.isPaused()).toBe(true);
    body.write(b('2'));
    body.end();
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['1']);
    reader.resume();
    await done;
    expect(seen).toEqual(['1', '2']);
  });

  it('rejects when the body fails or closes early', async () => {
    const failing = new PassThrough();
    const r1 = new ChunkReader(failing);
    const p1 = r1.pump(() => true);
    failing.destroy(Object.assign(new Error('socket hang up'), { code: 'UND_ERR_SOCKET' }));
    await expect(p1).rejects.toThrow('socket hang up');
    const closing = new PassThrough();
    const r2 = new ChunkReader(closing);
    const p2 = r2.next();
    closing.destroy();
    await expect(p2).rejects.toThrow('closed early');
  });
});
