#!/usr/bin/env node
// `npx hecate …` from a checkout: the CLI is built with the server (`npm run build`) into dist/src/cli.js.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const entry = join(__dirname, '..', 'dist', 'src', 'cli.js');
if (!existsSync(entry)) {
  process.stderr.write('hecate: dist/src/cli.js is missing\n  fix: run `npm run build` first\n');
  process.exit(1);
}
require(entry);
