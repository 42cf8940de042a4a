import { Global, Module } from '@nestjs/common';
import { WorkerRequests } from './worker-requests';

/** The worker-request primitive, one instance per process (its handlers are the @WorkerRequestHandler methods a worker finds at boot). */
@Global()
@Module({ providers: [WorkerRequests], exports: [WorkerRequests] })
export class LeaseModule {}
