import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(__dirname, '../..');

/** Lints `code` as if it were `file` (an existing file: type-aware rules need one the TypeScript project knows), with the project's real ESLint CLI and config. */
async function problems(file: string, code: string): Promise<string[]> {
  const run = spawnSync(process.execPath, [resolve(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', file, '--format', 'json'], {
    cwd: root,
    input: code,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('ESLint rules (docs/style.md rule 14): forwardRef', () => {
  it('refuses forwardRef', async () => {
    const found = await problems(
      'src/modules/tasks/tasks.module.ts',
      "import { forwardRef } from '@nestjs/common';\nexport const a = forwardRef(() => Object);\n",
    );
    expect(found.some((p) => p.includes('forwardRef'))).toBe(true);
  });
});
