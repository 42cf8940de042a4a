import { DynamicModule, Module } from '@nestjs/common';
import type { CoreResources } from '@core/core.module';
import { ApiModule } from './api.module';
import { WorkerModule } from './worker.module';

/** `npm start`: api and worker roles in one process (the embedded default). */
@Module({})
export class AllInOneModule {
  static forRoot(core: CoreResources): DynamicModule {
    return { module: AllInOneModule, imports: [ApiModule.forRoot(core), WorkerModule.forRoot(core, { standalone: false })] };
  }
}
