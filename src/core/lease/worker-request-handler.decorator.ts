import { SetMetadata } from '@nestjs/common';
import type { WorkerRequestTypes } from '@contracts/worker-requests';
import type { WorkerRequestContext, WorkerRequestTypeMap } from './worker-requests';

export const WORKER_REQUEST_HANDLER_METADATA = 'hecate:worker-request-handler';

export interface WorkerRequestHandlerMeta {
  kind: string;
}

/** What a worker-request handler method looks like: the stored payload and the context in, the JSON answer out. */
type HandlerMethod = (payload: never, ctx: WorkerRequestContext) => Promise<object>;

/**
 * Marks a provider method as the worker's handler of one kind of worker request (core/lease WorkerRequests), a kind
 * of the registry (`libs/contracts/src/worker-requests.ts`, which also says whether it takes the api's unstored input):
 * on a worker, WorkerRequestJob finds every one at boot, and a kind with no handler or two is a boot error. Declared
 * beside the code that asks for the kind; the api builds no handler (it only asks), so only worker-only providers need
 * to carry one — a handler on a provider both roles build is simply never looked for on the api.
 */
export const WorkerRequestHandler =
  <T extends WorkerRequestTypeMap = WorkerRequestTypes>(kind: NoInfer<keyof T & string>) =>
  <M extends HandlerMethod>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>): void => {
    SetMetadata<string, WorkerRequestHandlerMeta>(WORKER_REQUEST_HANDLER_METADATA, { kind })(target, key, descriptor);
  };
