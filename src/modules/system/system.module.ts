import { Module } from '@nestjs/common';
import { DatabaseModule } from '@core/database/database.module';
import { QueueProbeEntity } from './queue-probe.entity';
import { QueueProbeRepository } from './queue-probe.repository';
import { QueueProbeService } from './queue-probe.service';

@Module({
  imports: [DatabaseModule.forFeature([QueueProbeEntity])],
  providers: [QueueProbeRepository, QueueProbeService],
  exports: [QueueProbeService],
})
export class SystemModule {}
