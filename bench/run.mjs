#!/usr/bin/env node
// `npm run bench [name] [-- args]`: runs bench/<name>/run.mjs, or every bench/*/run.mjs in turn.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [name, ...rest] = process.argv.slice(2);
const all = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(here, d.name, 'run.mjs')))
  .map((d) => d.name)
  .sort();
const selected = name && !name.startsWith('-') ? [name] : all;
const args = name && !name.startsWith('-') ? rest : process.argv.slice(2);
let failed = false;
for (const bench of selected) {
  if (!all.includes(bench)) {
    process.stderr.write(`no benchmark "${bench}" (have: ${all.join(', ')})\n`);
    process.exit(2);
  }
  process.stdout.write(`\n=== bench/${bench} ===\n`);
  const r = spawnSync(process.execPath, [join(here, bench, 'run.mjs'), ...args], { stdio: 'inherit' });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
