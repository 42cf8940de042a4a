// A scratch Postgres database for a benchmark's scaled deployment, dropped afterwards.
import pg from 'pg';

export const BENCH_DATABASE = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Creates `<prefix>_<pid>` next to BENCH_DATABASE_URL; `drop()` removes it (forcing off any connection left). */
export async function scratchDatabase(prefix) {
  const name = `${prefix}_${process.pid}`;
  const admin = new pg.Client({ connectionString: BENCH_DATABASE });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(BENCH_DATABASE);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
