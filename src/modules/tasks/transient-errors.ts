/** The run writes' retry of transient database errors: the one in core, shared with Agent Chat turns. */
export { isTransientDbError, retryTransient } from '@core/database/retry-transient';
