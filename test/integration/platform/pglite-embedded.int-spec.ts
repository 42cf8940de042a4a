import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createDataSource } from '@core/database/data-source.factory';
import { buildPgliteTemplate, pgliteOptions, pgliteTemplatePath } from '@core/database/pglite-template';

/**
 * The embedded database's footprint settings (src/core/database/pglite-template.ts): a first boot unpacks the
 * build's initdb archive instead of running initdb, and every database runs with 16 MB of shared buffers, also one
 * initdb'ed with PGlite's 128 MB default. bench/server-start measures what they save.
 */
describe('embedded PGlite: template and settings', () => {
  const dirs: string[] = [];
  const scratch = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'hecate-pglite-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('builds the template where a first boot looks for it, and a first boot unpacks it into a working database', async () => {
    const template = join(scratch(), 'initdb.tar.gz');
    await buildPgliteTemplate(template);
    expect(readFileSync(template).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])); // gzip
    expect(pgliteTemplatePath()).toMatch(/dist\/pglite\/initdb-\d+\.\d+\.\d+\.tar\.gz$/);
    expect(existsSync(pgliteTemplatePath())).toBe(true); // `npm run build` made it (the suite runs on a build)

    const dataDir = scratch();
    const first = pgliteOptions(join(dataDir, 'pglite'));
    expect(first.templateUsed).toBe(true);
    const ds = await createDataSource({ url: undefined, dataDir, poolSize: 1, entities: [] });
    await ds.initialize();
    try {
      await ds.query('CREATE TABLE t (x int)');
      await ds.query('INSERT INTO t VALUES (1), (2)');
      expect(await ds.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 2 }]);
      expect(await ds.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await ds.destroy();
    }
    // The second open finds the database (no template), with the rows the first wrote.
    expect(pgliteOptions(join(dataDir, 'pglite')).templateUsed).toBe(false);
    const again = await createDataSource({ url: undefined, dataDir, poolSize: 1, entities: [] });
    await again.initialize();
    try {
      expect(await again.query('SELECT count(*)::int AS n FROM t')).toEqual([{ n: 2 }]);
    } finally {
      await again.destroy();
    }
  });

  it('runs a data directory initdb made with the 128 MB default on 16 MB of shared buffers', async () => {
    const dataDir = scratch();
    const old = await PGlite.create({ dataDir: join(dataDir, 'pglite') });
    expect((await old.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0].shared_buffers).toBe('128MB');
    await old.close();
    const ds = await createDataSource({ url: undefined, dataDir, poolSize: 1, entities: [] });
    await ds.initialize();
    try {
      expect(await ds.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await ds.destroy();
    }
  });
});
