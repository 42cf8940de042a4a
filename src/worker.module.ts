import { DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { CoreModule, CoreResources } from '@core/core.module';
import { JobDispatcher } from '@core/queue/job-dispatcher';
import { QueueConsumerService } from '@core/queue/queue-consumer.service';
import { QueueProbeJob } from '@modules/system/queue-probe.job';
import { DOMAIN_MODULES } from './domain.modules';
import { RunJob } from '@modules/tasks/run.job';

/** The worker role: job processors are provided here and nowhere else (STYLE rule 1). */
@Module({})
export class WorkerModule {
  static processors = [QueueProbeJob, RunJob];

  static forRoot(core: CoreResources, options: { standalone: boolean } = { standalone: true }): DynamicModule {
    return {
      module: WorkerModule,
      imports: [...(options.standalone ? [CoreModule.forRoot(core)] : []), DiscoveryModule, ...DOMAIN_MODULES],
      providers: [JobDispatcher, QueueConsumerService, ...WorkerModule.processors],
    };
  }
}
