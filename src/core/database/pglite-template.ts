import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions, type ParserOptions } from '@electric-sql/pglite';
import { rootLogger } from '@core/logging/logger';
import { installationRoot } from '@core/config/installation';

/**
 * PGlite's postgres runs in WebAssembly memory, which never shrinks. initdb's default of 128 MB of shared buffers is
 * sized for a database server, not for one embedded in an API process: 16 MB holds Hecate's working set (the embedded
 * mode is one team's traffic; more is the scaled mode on Postgres). Given on the command line, it also applies to data
 * directories made with the old default. bench/server-start measures the effect on idle RSS (about -100 MB).
 */
const SHARED_BUFFERS = 'shared_buffers=16MB';

/** The postgres settings of every embedded database: PGlite's own defaults, then ours. */
export const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', SHARED_BUFFERS];

/**
 * V8 compiles WebAssembly with Liftoff (a baseline compiler) and then recompiles hot functions with TurboFan in the
 * background. For PGlite's 9 MB module that recompilation peaks at ~450 MB of compiler memory a few seconds after every
 * start and buys ~20 % per query; the embedded server keeps Liftoff code only (bench/server-start reports the peaks).
 * The flags are read when a module is compiled, so setting them before PGlite compiles its module is enough; the
 * scaled processes never load WebAssembly and are not touched.
 */
export function baselineWasmOnly(): void {
  setFlagsFromString('--no-wasm-tier-up');
  setFlagsFromString('--no-wasm-dynamic-tiering');
}

/** The installed PGlite's version (its package.json is not exported: found from its entry, dist/index.cjs). */
const pgliteVersion = (): string =>
  (JSON.parse(readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * Where the build leaves the initdb'ed data directory for this PGlite release (`dist/pglite/`): initdb peaks at
 * ~500 MB even with the settings above, so it runs once at build time (`npm run build`, the image's build stage)
 * and a first boot unpacks its 4.5 MB archive instead (peak ~250 MB).
 */
export function pgliteTemplatePath(): string {
  return join(installationRoot() ?? resolve(__dirname, '..', '..', '..', '..'), 'dist', 'pglite', `initdb-${pgliteVersion()}.tar.gz`);
}

/**
 * The options that open the embedded database in `dataDir`: an existing one as it is; a new one from the build's
 * template when there is one (else PGlite runs initdb itself, which `templateUsed` tells the caller).
 */
export function pgliteOptions(dataDir: string): { options: PGliteOptions; templateUsed: boolean } {
  const options: PGliteOptions = { dataDir, relaxedDurability: true, startParams: PGLITE_START_PARAMS, initDbStartParams: ['--set', SHARED_BUFFERS] };
  const template = pgliteTemplatePath();
  if (existsSync(join(dataDir, 'PG_VERSION')) || !existsSync(template)) return { options, templateUsed: false };
  return { options: { ...options, loadDataDir: new Blob([readFileSync(template)]) }, templateUsed: true };
}

/** Opens (creating when new) the embedded database in `dataDir` with the settings above. */
export async function openPglite(dataDir: string, parsers: ParserOptions): Promise<PGlite> {
  baselineWasmOnly();
  const { options, templateUsed } = pgliteOptions(dataDir);
  if (!templateUsed && !existsSync(join(dataDir, 'PG_VERSION')))
    rootLogger().info({ dataDir }, 'no PGlite template in the build (npm run build makes it): running initdb, which peaks at ~500 MB once');
  return PGlite.create({ ...options, parsers });
}

/** `npm run build:pglite`: runs initdb in memory and writes the archive a first boot unpacks. */
export async function buildPgliteTemplate(path = pgliteTemplatePath()): Promise<string> {
  baselineWasmOnly();
  const db = await PGlite.create({ initDbStartParams: ['--set', SHARED_BUFFERS] });
  try {
    const archive = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(`${path}.part`, archive);
    renameSync(`${path}.part`, path);
  } finally {
    await db.close();
  }
  return path;
}
