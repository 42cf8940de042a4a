import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { UsageEventEntity } from './usage-event.entity';
import { toCsv, UsageRepository } from './usage.repository';

const CURRENT = 'current.csv';
const IMPORTING = '.importing';

/**
 * Embedded mode's ledger spool. PGlite runs on the api process's event loop, so writing ledger rows into it
 * every second means frequent stalls of the request path. Instead each flush appends CSV to a file (the write
 * itself happens on libuv's thread pool) and the spool is imported with one COPY when it is large, when
 * traffic pauses, before a read, and at shutdown — rare, larger stalls that almost no request meets.
 * A crash loses at most what was not yet appended (one flush interval); leftovers are imported at boot, and a
 * file whose import may have committed just before a crash is re-imported skipping existing ids.
 */
export class UsageSpool {
  private rows = 0;
  private lastImportAt = Date.now();
  private importing: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly repo: UsageRepository,
  ) {}

  get pendingRows(): number {
    return this.rows;
  }

  get msSinceImport(): number {
    return Date.now() - this.lastImportAt;
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await this.importAll();
  }

  async append(rows: UsageEventEntity[]): Promise<void> {
    if (rows.length === 0) return;
    await appendFile(join(this.dir, CURRENT), `${toCsv(rows)}\n`);
    this.rows += rows.length;
  }

  /** Imports every spooled row (serialised: concurrent callers wait for the same import). */
  importAll(): Promise<void> {
    this.importing ??= this.run().finally(() => (this.importing = undefined));
    return this.importing;
  }

  private async run(): Promise<void> {
    const batch = join(this.dir, `batch-${Date.now()}-${randomBytes(3).toString('hex')}.csv`);
    await rename(join(this.dir, CURRENT), batch).catch(() => undefined);
    this.rows = 0;
    const files = (await readdir(this.dir)).filter((f) => f.startsWith('batch-')).sort();
    for (const file of files) {
      const path = join(this.dir, file);
      let target = path;
      const retry = file.endsWith(IMPORTING);
      if (!retry) {
        target = `${path}${IMPORTING}`;
        await rename(path, target);
      }
      const text = await readFile(target, 'utf8');
      // An append cut short by a crash leaves a partial last line: drop it.
      const csv = text.slice(0, text.lastIndexOf('\n') + 1).trimEnd();
      if (csv.length > 0 && !(await this.repo.copyCsv(csv, { skipExisting: retry }))) throw new Error('PGlite COPY is not available');
      await unlink(target);
    }
    this.lastImportAt = Date.now();
  }
}
