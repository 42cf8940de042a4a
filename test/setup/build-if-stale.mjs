// `npm run build` unless dist/ was built from exactly the current sources: one build per CI run (`npm test` and
// the type check both need it), and none on a second `npm test` after no change.
//   node test/setup/build-if-stale.mjs              builds when any input changed since the last build through here
//   node test/setup/build-if-stale.mjs --if-missing builds only when there is no build at all (the SDK's types)
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const stamp = join(root, 'dist', '.build-inputs');
// The build's own outputs under libs/ are not inputs.
const outputs = new Set(['libs/sdk/src/generated', 'libs/sdk/openapi.json', 'libs/sdk/dist', 'libs/sdk/node_modules', 'libs/sdk/.build-inputs.json']);

function inputsHash() {
  const hash = createHash('sha256');
  const walk = (path) => {
    const rel = relative(root, path);
    if (outputs.has(rel)) return;
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (!outputs.has(relative(root, child))) hash.update(`\0${relative(root, child)}\0`).update(readFileSync(child));
    }
  };
  for (const dir of ['src', 'libs', 'migrations', 'web']) walk(join(root, dir));
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.acp.json', 'nest-cli.json', 'nest-cli.acp.json']) {
    hash.update(`\0${file}\0`).update(readFileSync(join(root, file)));
  }
  return hash.digest('hex');
}

const sdkTypes = join(root, 'libs', 'sdk', 'src', 'generated', 'operations.ts');
const built = existsSync(stamp) && existsSync(sdkTypes);
const ifMissing = process.argv.includes('--if-missing');
const current = ifMissing ? undefined : inputsHash();
if (ifMissing ? !existsSync(sdkTypes) : !built || readFileSync(stamp, 'utf8') !== current) {
  execSync('npm run build', { cwd: root, stdio: 'inherit' });
  writeFileSync(stamp, current ?? inputsHash());
} else {
  process.stdout.write('build: dist/ and the SDK types are current\n');
}
