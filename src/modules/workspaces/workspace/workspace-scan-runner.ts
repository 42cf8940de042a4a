import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ScanResult, ScanSpec } from './workspace-scan';

export type { ScanResult, ScanSpec } from './workspace-scan';

export type ScanOutcome =
  { status: 'ok'; result: ScanResult } | { status: 'timed_out'; timeoutMs: number } | { status: 'failed'; error: string; invalidPattern: boolean };

/** Heap of a scan worker: a scan holds one chunk and one capped line per file, far below this. */
const WORKER_HEAP_MB = 256;
const MAX_IDLE = 2;
const idle: Worker[] = [];

function newWorker(): Worker {
  return new Worker(join(__dirname, 'workspace-scan.worker.js'), { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
}

/**
 * docs/security.md: grep and glob run in a worker thread, never on the event loop, and end at `timeoutMs` (the worker is
 * terminated — a catastrophic regular expression included — and the call answers `timed_out`); the signal (a
 * cancelled run) ends it too. Finished workers are kept (two at most, unreferenced) for the next scan.
 */
export function scanWorkspace(spec: ScanSpec, timeoutMs: number, signal?: AbortSignal): Promise<ScanOutcome> {
  const worker = idle.pop() ?? newWorker();
  worker.ref();
  return new Promise<ScanOutcome>((resolve) => {
    let done = false;
    const finish = (outcome: ScanOutcome, reusable: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (reusable && idle.length < MAX_IDLE) {
        worker.unref();
        idle.push(worker);
        worker.once('exit', () => idle.splice(idle.indexOf(worker) >>> 0, idle.includes(worker) ? 1 : 0));
      } else {
        void worker.terminate();
      }
      resolve(outcome);
    };
    const onMessage = (m: { ok: true; result: ScanResult } | { ok: false; error: string; invalidPattern: boolean }) =>
      finish(m.ok ? { status: 'ok', result: m.result } : { status: 'failed', error: m.error, invalidPattern: m.invalidPattern }, true);
    const onError = (err: Error) => finish({ status: 'failed', error: `the scan stopped: ${err.message}`, invalidPattern: false }, false);
    const onExit = () => finish({ status: 'failed', error: 'the scan worker exited', invalidPattern: false }, false);
    const onAbort = () => finish({ status: 'failed', error: 'cancelled', invalidPattern: false }, false);
    const timer = setTimeout(() => finish({ status: 'timed_out', timeoutMs }, false), timeoutMs);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    if (!done) worker.postMessage(spec);
  });
}
