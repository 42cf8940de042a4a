// `npm run lint`: the build first unless dist/ is current (the type check and type-aware ESLint read the SDK's
// generated types), then every check at once, as many running as the machine has cores: each is one single-threaded
// process, so on CI's two cores they take about half the time they took one after the other. Each check's output is
// printed whole when it ends; the run fails when any check fails, after all have ended.
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const checks = [
  ['eslint', 'node_modules/.bin/eslint', ['.']],
  ['tsc (server)', 'node_modules/.bin/tsc', ['-p', 'tsconfig.json', '--noEmit']],
  ['prettier', 'npm', ['run', '--silent', 'format:check']],
  ['tsc (console)', 'node_modules/.bin/tsc', ['-p', 'web/tsconfig.json']],
  ['dependency rules', 'npm', ['run', '--silent', 'lint:deps']],
];

const build = spawnSync(process.execPath, ['test/setup/build-if-stale.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const run = ([name, command, args]) =>
  new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (err) => (out += `${err.message}\n`));
    child.on('close', (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n== ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${seconds} s\n${out}`);
      resolve(code === 0);
    });
  });

const queue = [...checks];
const lanes = Array.from({ length: Math.min(availableParallelism(), checks.length) }, async () => {
  let ok = true;
  for (let next = queue.shift(); next; next = queue.shift()) ok = (await run(next)) && ok;
  return ok;
});
const results = await Promise.all(lanes);
process.exit(results.every(Boolean) ? 0 : 1);
