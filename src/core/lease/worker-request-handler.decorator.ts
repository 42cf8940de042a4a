import { SetMetadata } from '@nestjs/common';
import type { WorkerRequestContext } from './worker-requests';

export const WORKER_REQUEST_HANDLER_METADATA = 'hecate:worker-request-handler';

export interface WorkerRequestHandlerMeta {
  kind: string;
  /** The handler needs the api's unstored input (`AskOptions.input`), handed over the bus once it holds the request. */
  input: boolean;
}

/** What a worker-request handler method looks like: the stored payload and the context in, the JSON answer out. */
type HandlerMethod = (payload: never, ctx: WorkerRequestContext) => Promise<object>;

/**
 * Marks a provider method as the worker's handler of one kind of worker request (core/lease WorkerRequests): on a
 * worker, WorkerRequestJob finds every one at boot and a kind declared twice is a boot error. Declared beside the code
 * that asks for the kind; the api builds no handler (it only asks), so only worker-only providers need to carry one —
 * a handler on a provider both roles build is simply never looked for on the api.
 */
export const WorkerRequestHandler =
  (kind: string, opts: { input?: boolean } = {}) =>
  <T extends HandlerMethod>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<T>): void => {
    SetMetadata<string, WorkerRequestHandlerMeta>(WORKER_REQUEST_HANDLER_METADATA, { kind, input: opts.input === true })(target, key, descriptor);
  };
