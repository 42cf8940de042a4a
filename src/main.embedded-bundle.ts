import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { rolldown, type Plugin } from 'rolldown';

/**
 * `npm run build:bundle` (a step of `npm run build`): the embedded server's entry, `dist/src/main.js` (what `npm start`
 * and `hecate start` run), as one file. Nest 12 ships ESM only, and Node loads ESM from CommonJS module by module,
 * resolving every import specifier on disk: about 0.55 s of the embedded start (bench/server-start, side by side).
 * The bundle holds our compiled code and the @nestjs packages; every other package stays a `require` of
 * node_modules, loaded as before (PGlite, BullMQ and the MCP SDK still only where they are first used).
 *
 * Only the embedded entry: the scaled api and worker start once per rollout and are held to a memory budget, and
 * the bundle keeps ~7 MB more of the api's heap (sources of modules it requires lazily included).
 *
 * `main.js` becomes a loader that turns the compile cache on and requires the bundle (so the bundle is cached too);
 * tsc's entry is kept as `main.unbundled.js` (`node dist/src/main.unbundled.js` starts the same server unbundled).
 */
const DIST_SRC = __dirname;
const ENTRY = join(DIST_SRC, 'main.js');
const UNBUNDLED = join(DIST_SRC, 'main.unbundled.js');
const BUNDLE = 'main.bundle.cjs';
const LOADER_MARK = '// The embedded entry, bundled by `npm run build:bundle` (src/main.embedded-bundle.ts).';

const requireHere = createRequire(__filename);
const resolvable = (id: string): boolean => {
  try {
    requireHere.resolve(id);
    return true;
  } catch {
    return false;
  }
};

/** Bundled: relative imports (our code, and the @nestjs packages' own files) and the @nestjs packages installed. */
const bundled = (id: string): boolean => id.startsWith('.') || id.startsWith('/') || (id.startsWith('@nestjs/') && resolvable(id));

/**
 * `__dirname` in a module of ours is its own directory, not the bundle's: the few that use it (installation root,
 * the scan worker's file, the console's assets) read it rewritten to that directory, relative to the bundle.
 */
const ownDirname: Plugin = {
  name: 'hecate-own-dirname',
  transform(code, id) {
    if (!id.startsWith(DIST_SRC) || !code.includes('__dirname')) return null;
    const rel = relative(DIST_SRC, dirname(id)).split('\\').join('/');
    if (!rel) return null;
    return code.replace(/\b__dirname\b/g, `require("node:path").join(__dirname, ${JSON.stringify(rel)})`);
  },
};

async function main(): Promise<void> {
  if (!readFileSync(ENTRY, 'utf8').includes(LOADER_MARK)) renameSync(ENTRY, UNBUNDLED);
  if (!existsSync(UNBUNDLED)) throw new Error(`${UNBUNDLED} is missing: run nest build first`);
  const build = await rolldown({
    input: UNBUNDLED,
    platform: 'node',
    external: (id) => !bundled(id),
    plugins: [ownDirname],
    // Nest's terminus checks optional peers with import.meta.resolve, which a CommonJS bundle has as require.resolve.
    transform: { define: { 'import.meta.resolve': 'require.resolve' } },
    logLevel: 'silent',
  });
  try {
    await build.write({ file: join(DIST_SRC, BUNDLE), format: 'cjs', codeSplitting: false, keepNames: true });
  } finally {
    await build.close();
  }
  writeFileSync(ENTRY, `"use strict";\n${LOADER_MARK}\nrequire("./core/compile-cache.js");\nrequire("./${BUNDLE}");\n`);
}

main().then(
  () => {
    process.stdout.write(`build: embedded entry bundled (dist/src/${BUNDLE})\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`embedded bundle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
