import { Writable } from 'node:stream';
import { createRootLogger } from './logger';
import { ignoreFailure } from './ignore-failure';

describe('ignoreFailure', () => {
  it('swallows the rejection and logs what failed and why it does not matter', async () => {
    const lines: string[] = [];
    createRootLogger('debug', 'test', new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    await expect(
      Promise.reject(new Error('redis down')).catch(ignoreFailure('cancel doorbell', 'the run sees the cancel at its next lease check')),
    ).resolves.toBeUndefined();
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'debug',
      err: 'redis down',
      why: 'the run sees the cancel at its next lease check',
      msg: 'cancel doorbell failed (ignored)',
    });
  });
});
