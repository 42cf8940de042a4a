import type { DeclaredMethod, Declarations } from '@core/discovery/declarations';
import { WORKER_REQUEST_HANDLER_METADATA, type WorkerRequestHandlerMeta } from './worker-request-handler.decorator';
import type { WorkerRequestRun, WorkerRequests } from './worker-requests';

/** The kinds a worker must handle, each with whether it takes the api's unstored input (`WORKER_REQUEST_KINDS`). */
export type WorkerRequestKinds = Readonly<Record<string, { readonly input: boolean }>>;

export class WorkerRequestRegistryError extends Error {
  constructor(problems: string[]) {
    super(`worker request registry is inconsistent:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'WorkerRequestRegistryError';
  }
}

/**
 * A worker's boot (docs/style.md rule 3, as the job dispatcher does for jobs): hands `requests` the handler of every
 * kind of `kinds` from the @WorkerRequestHandler methods of the process's providers, or throws listing every kind with no handler or
 * two, and every handler of a kind the registry does not have. Nothing is registered when anything is wrong.
 */
export function registerWorkerRequestHandlers(
  requests: Pick<WorkerRequests, 'register'>,
  declarations: Pick<Declarations, 'methods'>,
  kinds: WorkerRequestKinds,
): void {
  const declared = declarations.methods<WorkerRequestHandlerMeta>(WORKER_REQUEST_HANDLER_METADATA);
  const found = new Map<string, DeclaredMethod<WorkerRequestHandlerMeta>[]>();
  for (const d of declared) found.set(d.meta.kind, [...(found.get(d.meta.kind) ?? []), d]);
  const problems: string[] = [];
  for (const [kind, list] of found) {
    if (!Object.hasOwn(kinds, kind)) problems.push(`worker request kind "${kind}" is not in the registry: ${list.map((d) => d.where).join(', ')}`);
    else if (list.length > 1) problems.push(`worker request kind "${kind}" is declared twice: ${list.map((d) => d.where).join(', ')}`);
  }
  for (const kind of Object.keys(kinds)) {
    if (!found.has(kind)) problems.push(`worker request kind "${kind}" has no handler`);
  }
  if (problems.length > 0) throw new WorkerRequestRegistryError(problems);
  for (const [kind, [d]] of found) requests.register(kind, d.call as WorkerRequestRun, { input: kinds[kind].input, where: d.where });
}
