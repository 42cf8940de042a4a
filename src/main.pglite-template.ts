import { buildPgliteTemplate } from '@core/database/pglite-template';

/** `npm run build:pglite` (a step of `npm run build`): the initdb'ed PGlite archive a first embedded boot unpacks. */
buildPgliteTemplate().then(
  (path) => {
    process.stdout.write(`build: PGlite template ${path}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`PGlite template failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
