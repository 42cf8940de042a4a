import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSecretFiles } from './secret-files';

describe('readSecretFiles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hecate-secret-files-'));
  writeFileSync(join(dir, 'token'), 'from-a-file\n');

  it('reads <NAME>_FILE into <NAME> for secret variables and records the file', () => {
    const { env, files, problems } = readSecretFiles({ GATEWAY_AUTH_TOKEN_FILE: join(dir, 'token'), PROVIDER_OPENAI_API_KEY_FILE: join(dir, 'token') });
    expect(problems).toEqual([]);
    expect(env).toEqual({ GATEWAY_AUTH_TOKEN: 'from-a-file', PROVIDER_OPENAI_API_KEY: 'from-a-file' });
    expect(files).toEqual([join(dir, 'token'), join(dir, 'token')]);
  });

  it('leaves other *_FILE variables alone', () => {
    expect(readSecretFiles({ SOME_FILE: '/x' }).env).toEqual({ SOME_FILE: '/x' });
  });

  it('names a variable set twice or a file that cannot be read', () => {
    expect(readSecretFiles({ GATEWAY_SECRET_KEY: 'x', GATEWAY_SECRET_KEY_FILE: join(dir, 'token') }).problems).toEqual([
      'GATEWAY_SECRET_KEY_FILE: GATEWAY_SECRET_KEY is set as well; set one of them',
    ]);
    expect(readSecretFiles({ DATABASE_URL_FILE: join(dir, 'missing') }).problems[0]).toMatch(/^DATABASE_URL_FILE: cannot read .*missing \(ENOENT\)$/);
  });
});
