// `prepack`: the package is packed from what the repository's `npm run build` made, never rebuilt here — a rebuild would
// replace the server's dist/ under a running server, and its output would break `npm pack --json`. This only checks
// that the built files exist and were built from the sources as they are now; it prints nothing on success and, on
// failure, one message on stderr naming the file and the fix.
//   node libs/sdk/scripts/check-built.mjs           the check (`prepack`)
//   node libs/sdk/scripts/check-built.mjs --record  records the sources' digests (the last step of `npm run build:sdk`)
// Digests, not modification times: a checkout or a stash that leaves a file's content as it was leaves the build current.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(sdk, '..', '..');
const record = join(sdk, '.build-inputs.json');
const FIX = 'run `npm run build` at the repository root (it writes libs/sdk/openapi.json, src/generated/ and dist/), then pack again';

/**
 * What the built files are made from, by path from the repository root: the server's controllers and DTOs (the
 * document), the API contract, the SDK's own sources. A directory that is not there (a copy of the package outside
 * the repository) has none.
 */
function inputs() {
  const digests = {};
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== join(sdk, 'src', 'generated')) walk(path);
      } else if (!entry.name.endsWith('.spec.ts')) {
        digests[relative(root, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
      }
    }
  };
  for (const dir of [join(root, 'src'), join(root, 'libs', 'contracts', 'src'), join(sdk, 'src')]) walk(dir);
  return digests;
}

function fail(message) {
  process.stderr.write(`@hecate/sdk: ${message}; ${FIX}.\n`);
  process.exit(1);
}

if (process.argv.includes('--record')) {
  writeFileSync(record, `${JSON.stringify(inputs(), null, 1)}\n`);
  process.exit(0);
}

const built = ['openapi.json', 'src/generated/schema.ts', 'src/generated/operations.ts', 'dist/index.js', 'dist/index.d.ts'];
const missing = built.filter((file) => !existsSync(join(sdk, file)));
if (missing.length > 0) fail(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing`);
if (!existsSync(record)) fail('dist/ was not made by `npm run build` (libs/sdk/.build-inputs.json is missing)');

const then = JSON.parse(readFileSync(record, 'utf8'));
const now = inputs();
const changed = [...new Set([...Object.keys(then), ...Object.keys(now)])].sort().find((path) => then[path] !== now[path]);
if (changed) fail(`${changed} ${changed in now ? (changed in then ? 'changed' : 'was added') : 'was removed'} since the last build`);
