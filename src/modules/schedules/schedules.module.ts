import { Module } from '@nestjs/common';
import { AgentChatModule } from '@modules/agent-chat';
import { TasksModule } from '@modules/tasks';
import { ScheduleFirer } from './schedule-firer.service';
import { SchedulesRepository } from './schedules.repository';
import { SchedulesRetention } from './schedules-retention';
import { SchedulesService } from './schedules.service';

/** Schedules: the API's service (both roles build it; the api's controller uses it). */
@Module({
  imports: [TasksModule, AgentChatModule],
  providers: [SchedulesRepository, SchedulesService, SchedulesRetention],
  exports: [SchedulesRepository, SchedulesService],
})
export class SchedulesModule {}

/** The firer: worker role only (docs/design.md §11.2: what runs, runs on a worker). */
@Module({
  imports: [SchedulesModule, TasksModule, AgentChatModule],
  providers: [ScheduleFirer],
})
export class SchedulesWorkerModule {}
