import { Module } from '@nestjs/common';
import { TasksModule } from '@modules/tasks';
import { AgentsRepository } from './agents.repository';
import { AgentsService } from './agents.service';

/** Saved agents. Registers in the tasks module's SavedAgents, where tasks and Agent Chat resolve `agent_id`. */
@Module({
  imports: [TasksModule],
  providers: [AgentsRepository, AgentsService],
  exports: [AgentsService],
})
export class AgentsModule {}
