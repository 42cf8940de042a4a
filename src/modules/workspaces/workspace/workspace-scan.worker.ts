import { parentPort } from 'node:worker_threads';
import { scan, type ScanSpec } from './workspace-scan';

/** Entry of the scan worker thread (workspace-scan-runner): one scan per message, answered with its result or error. */
parentPort?.on('message', (spec: ScanSpec) => {
  scan(spec).then(
    (result) => parentPort?.postMessage({ ok: true, result }),
    (err: unknown) =>
      parentPort?.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err), invalidPattern: err instanceof SyntaxError }),
  );
});
