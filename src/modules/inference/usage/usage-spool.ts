import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { UsageEventEntity } from './usage-event.entity';
import { toCsv, UsageRepository } from './usage.repository';

const CURRENT = 'current.csv';
const IMPORTING = '.importing';
/**
 * Rows per COPY. A COPY runs on the event loop (PGlite is WASM on the main thread): a spool file goes in
 * slices with a yield between them, so a request waits for one slice (a few ms), not the whole file.
 */
export const COPY_SLICE_ROWS = 500;

/**
 * A spool file's complete records in slices of at most `rows` records, in one pass. A record ends at a newline
 * outside quotes; every append ends with one, so whatever follows the last such newline is a record a crash cut
 * short — even one cut inside a quoted field that holds a newline — and is dropped.
 */
export function spoolSlices(text: string, rows: number): string[] {
  const slices: string[] = [];
  let start = 0;
  let end = -1; // the last record end seen
  let records = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34)
      quoted = !quoted; // '"' (an escaped "" toggles twice)
    else if (c === 10 && !quoted) {
      end = i;
      if (++records === rows) {
        slices.push(text.slice(start, i));
        start = i + 1;
        records = 0;
      }
    }
  }
  if (records > 0) slices.push(text.slice(start, end));
  return slices;
}

/**
 * Embedded mode's ledger spool. PGlite runs on the api process's event loop, so writing ledger rows into it
 * every second means frequent stalls of the request path. Instead each flush appends CSV to a file (the write
 * itself happens on libuv's thread pool) and the spool is imported when it is large, when traffic pauses,
 * before a read, and at shutdown, in COPYs of COPY_SLICE_ROWS with a yield between them.
 * A crash loses at most what was not yet appended (one flush interval); leftovers are imported at boot, and a
 * file whose import may have (partly) committed before a crash or an error is re-imported skipping existing ids.
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
    // ENOENT: nothing spooled since the last import. Any other failure leaves the rows in CURRENT for the next import.
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
      for (const slice of spoolSlices(text, COPY_SLICE_ROWS)) {
        if (!(await this.repo.copyCsv(slice, { skipExisting: retry }))) throw new Error('PGlite COPY is not available');
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await unlink(target);
    }
    this.lastImportAt = Date.now();
  }
}
