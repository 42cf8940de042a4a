// `npm run build` unless dist/ was built from exactly the current sources: one build per CI run (`npm test` and
// the type check both need it), and none on a second `npm test` after no change.
//   node test/setup/build-if-stale.mjs              builds when any input changed since the last build through here
//   node test/setup/build-if-stale.mjs --if-missing builds only when there is no build at all (the SDK's types)
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const stamp = join(root, 'dist', '.build-inputs');
// The build's own outputs under libs/ are not inputs.
const outputs = new Set(['libs/sdk/src/generated', 'libs/sdk/openapi.json', 'libs/sdk/dist', 'libs/sdk/node_modules', 'libs/sdk/.build-inputs.json']);

/**
 * The build's inputs, as two hashes: of their contents (what decides), and of their paths, sizes and modification
 * times (cheap: no file read). An unchanged stat hash means unchanged inputs, which keeps a second `npm start` to
 * ~10 ms of checking instead of ~80 ms of reading; any other stat hash falls back to the contents.
 */
function inputFiles() {
  const files = [];
  const walk = (path) => {
    const rel = relative(root, path);
    if (outputs.has(rel)) return;
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (!outputs.has(relative(root, child))) files.push(child);
    }
  };
  for (const dir of ['src', 'libs', 'migrations', 'web']) walk(join(root, dir));
  for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.acp.json', 'nest-cli.json', 'nest-cli.acp.json']) {
    files.push(join(root, file));
  }
  return files;
}

const contentsHash = (files) => {
  const hash = createHash('sha256');
  for (const f of files) hash.update(`\0${relative(root, f)}\0`).update(readFileSync(f));
  return hash.digest('hex');
};

const statsHash = (files) => {
  const hash = createHash('sha256');
  for (const f of files) {
    const { size, mtimeMs } = statSync(f);
    hash.update(`\0${relative(root, f)}\0${size}\0${mtimeMs}`);
  }
  return hash.digest('hex');
};

/** The stamp: the contents hash, then the stats hash, one per line. */
const readStamp = () => {
  const [contents, stats] = existsSync(stamp) ? readFileSync(stamp, 'utf8').split('\n') : [];
  return { contents, stats };
};

const sdkTypes = join(root, 'libs', 'sdk', 'src', 'generated', 'operations.ts');
const ifMissing = process.argv.includes('--if-missing');
const write = (files) => writeFileSync(stamp, `${contentsHash(files)}\n${statsHash(files)}`);
if (ifMissing) {
  if (!existsSync(sdkTypes)) {
    execSync('npm run build', { cwd: root, stdio: 'inherit' });
    write(inputFiles());
  }
} else {
  const files = inputFiles();
  const was = readStamp();
  const stats = statsHash(files);
  const current = existsSync(sdkTypes) && (was.stats === stats || was.contents === contentsHash(files));
  if (current) {
    if (was.stats !== stats) writeFileSync(stamp, `${was.contents}\n${stats}`);
    process.stdout.write('build: dist/ and the SDK types are current\n');
  } else {
    execSync('npm run build', { cwd: root, stdio: 'inherit' });
    write(inputFiles());
  }
}
