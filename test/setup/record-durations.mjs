// Writes test/setup/suite-durations.json (milliseconds per suite file, relative to the repository) from a Jest
// JSON report, for the e2e lanes' order (test/setup/sequencer.cjs):  node test/setup/record-durations.mjs .ci/jest-results.json
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const report = JSON.parse(readFileSync(process.argv[2] ?? join(root, '.ci', 'jest-results.json'), 'utf8'));
const durations = Object.fromEntries(
  report.testResults
    .map((r) => [
      relative(root, r.name)
        .split(/[\\/]/)
        .join('/')
        .replace(/^.*?(?=(src|libs|test)\/)/, ''),
      Math.round(r.endTime - r.startTime),
    ])
    .sort(([a], [b]) => a.localeCompare(b)),
);
writeFileSync(join(root, 'test', 'setup', 'suite-durations.json'), `${JSON.stringify(durations, null, 1)}\n`);
process.stdout.write(`${Object.keys(durations).length} suites recorded\n`);
