// `npm test` after the build: the unit project, then the integration project, each on parallel Jest workers (every
// integration suite has its own scratch databases and Redis prefix; much of its time is waiting on them, which a
// second worker fills: 94 → 70 s measured side by side), then the e2e project on two Jest workers (below).
// Arguments go to every run; `--json --outputFile=<file>` gets one report with the runs' results added up.
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

/**
 * Two lanes unless HECATE_E2E_WORKERS=<n> says otherwise (1: in band). Two lanes ran the e2e project in 652 s of
 * wall time against 989 s in band on this 2-core CI machine (whole CI run 924 s against 1,286 s, same head, same
 * day), all 75 suites passing, kill and timeout tests included. More lanes gain little: at two the e2e project
 * already keeps both cores busy (three lanes: 654 s against 699 s, 1.94 cores busy; 41 % of CI's CPU is the servers
 * the suites start), so what shortens it is fewer and cheaper server starts, not more lanes.
 */
function e2eWorkers() {
  const lanes = Number(process.env.HECATE_E2E_WORKERS ?? 2);
  return Number.isInteger(lanes) && lanes > 1 ? [`--maxWorkers=${lanes}`] : ['--runInBand'];
}

const runs = [
  ['unit', ['--maxWorkers=100%', '--selectProjects', 'unit']],
  ['integration', ['--maxWorkers=100%', '--selectProjects', 'integration']],
  ['e2e', [...e2eWorkers(), '--selectProjects', 'e2e']],
];
const parts = runs.map(([name]) => (outputFile ? `${outputFile}.${name}` : undefined));
const statuses = runs.map(([name, projectArgs], i) => {
  const started = Date.now();
  const status = jest(projectArgs, parts[i]);
  process.stdout.write(`\n== ${name}: exit ${status} in ${Math.round((Date.now() - started) / 1000)} s\n`);
  return status;
});

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
