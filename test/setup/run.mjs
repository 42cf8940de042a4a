// `npm test` after the build: the unit project on parallel Jest workers, then the integration and e2e projects in
// band (they start servers, Redis instances and databases whose timing the 2-core CI machine must not starve).
// Arguments go to both runs; `--json --outputFile=<file>` gets one report with both runs' results added up.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
const outArg = args.find((a) => a.startsWith('--outputFile='));
const outputFile = outArg?.slice('--outputFile='.length);
const passThrough = args.filter((a) => a !== outArg);
// A path or name filter may match files of one run only; without one, every project must find its tests.
const filtered = passThrough.some((a) => !a.startsWith('-'));
const jest = (projectArgs, out) =>
  spawnSync(
    process.execPath,
    [
      '--experimental-vm-modules',
      'node_modules/jest/bin/jest.js',
      ...projectArgs,
      ...(filtered ? ['--passWithNoTests'] : []),
      ...(out ? [`--outputFile=${out}`] : []),
      ...passThrough,
    ],
    { stdio: 'inherit' },
  ).status ?? 1;

const parts = outputFile ? [`${outputFile}.unit`, `${outputFile}.in-band`] : [undefined, undefined];
const statuses = [jest(['--maxWorkers=100%', '--selectProjects', 'unit'], parts[0]), jest(['--runInBand', '--selectProjects', 'integration', 'e2e'], parts[1])];

if (outputFile) {
  const reports = parts.map((p) => {
    try {
      return JSON.parse(readFileSync(p, 'utf8'));
    } catch {
      return undefined;
    } finally {
      rmSync(p, { force: true });
    }
  });
  const [first, ...rest] = reports.filter(Boolean);
  if (first) {
    for (const r of rest) {
      for (const [key, value] of Object.entries(r)) if (key.startsWith('num') && typeof value === 'number') first[key] += value;
      first.testResults.push(...r.testResults);
      first.success &&= r.success;
      first.startTime = Math.min(first.startTime, r.startTime);
    }
    first.success &&= reports.every(Boolean);
    writeFileSync(outputFile, JSON.stringify(first));
  }
}
process.exit(statuses.find((s) => s !== 0) ?? 0);
