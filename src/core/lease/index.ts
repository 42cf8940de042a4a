/** The one lease primitive (docs/design.md §4, §11) and the worker-request primitive built on it. */
export { Lease, LEASE_OWNER, keepLease, newLeaseToken, type LeaseTable } from './lease';
export { LeaseModule } from './lease.module';
export { WorkerRequestJob } from './worker-request.job';
export {
  WORKER_REQUEST_CHANNELS,
  WorkerRequests,
  type AskOptions,
  type WorkerRequestContext,
  type WorkerRequestRun,
  type WorkerRequestTypeMap,
} from './worker-requests';
export { WorkerRequestHandler } from './worker-request-handler.decorator';
export { registerWorkerRequestHandlers, WorkerRequestRegistryError, type WorkerRequestKinds } from './worker-request-handlers';
export { NO_WORKER_OPERATOR_ACTION, noWorkerAnswered } from './worker-request-errors';
