import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

/** docs/style.md "Size and clarity": files ≤ 400 lines, functions ≤ 80, classes ≤ 8 constructor dependencies, in src/ and libs/. */
describe('size rules', () => {
  const metrics = JSON.parse(execFileSync(process.execPath, [join(root, 'test/lint/code-metrics.mjs'), '--json'], { encoding: 'utf8' })) as {
    filesOver400: string[];
    functionsOver80: string[];
    classesOver8Deps: string[];
  };

  it('no file over 400 lines', () => expect(metrics.filesOver400).toEqual([]));
  it('no function over 80 lines', () => expect(metrics.functionsOver80).toEqual([]));
  it('no class with more than 8 constructor dependencies', () => expect(metrics.classesOver8Deps).toEqual([]));
});
