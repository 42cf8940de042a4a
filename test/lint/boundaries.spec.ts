import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(__dirname, '../..');

/** Lints `code` as if it lived at `file`, with the project's real ESLint CLI and config. */
async function problems(file: string, code: string): Promise<string[]> {
  const run = spawnSync(process.execPath, [resolve(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', file, '--format', 'json'], {
    cwd: root,
    input: code,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('module boundaries (STYLE rule 14)', () => {
  it('refuses forwardRef', async () => {
    const found = await problems('src/modules/tasks/x.module.ts', "import { forwardRef } from '@nestjs/common';\nexport const a = forwardRef(() => Object);\n");
    expect(found.some((p) => p.includes('forwardRef'))).toBe(true);
  });

  it('refuses core importing modules', async () => {
    const found = await problems(
      'src/core/x.ts',
      "import { QueueProbeService } from '@modules/system/queue-probe.service';\nexport const a = QueueProbeService;\n",
    );
    expect(found).toEqual([expect.stringContaining('core/ and libs/ never import modules/')]);
  });

  it("refuses a module importing another module's repository or entity", async () => {
    const code =
      "import { QueueProbeRepository } from '@modules/system/queue-probe.repository';\n" +
      "import { QueueProbeEntity } from '@modules/system/queue-probe.entity';\nexport const a = [QueueProbeRepository, QueueProbeEntity];\n";
    const found = await problems('src/modules/gateway/x.service.ts', code);
    expect(found).toHaveLength(2);
    expect(found.every((p) => p.includes("another module's tables"))).toBe(true);
  });

  it("allows a module's own repository and another module's service", async () => {
    const code =
      "import { QueueProbeRepository } from '@modules/system/queue-probe.repository';\n" +
      "import { QueueProbeService } from '@modules/system/queue-probe.service';\nexport const a = [QueueProbeRepository, QueueProbeService];\n";
    expect(await problems('src/modules/system/x.service.ts', code)).toEqual([]);
    expect(
      await problems(
        'src/modules/gateway/x.service.ts',
        "import { QueueProbeService } from '@modules/system/queue-probe.service';\nexport const a = QueueProbeService;\n",
      ),
    ).toEqual([]);
  });
});
