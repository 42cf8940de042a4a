import { Global, Module } from '@nestjs/common';
import { WorkerRequests } from './worker-requests';

/** The worker-request primitive, one instance per process: every module registers its kinds on it. */
@Global()
@Module({ providers: [WorkerRequests], exports: [WorkerRequests] })
export class LeaseModule {}
