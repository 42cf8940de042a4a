import { Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { AgentChatTurnRunner } from './agent-chat-turn.runner';

@Injectable()
export class AgentChatTurnJob {
  constructor(private readonly runner: AgentChatTurnRunner) {}

  @JobHandler('agent_chat.turn')
  handle(payload: JobPayloads['agent_chat.turn'], ctx: JobContext): Promise<void> {
    return this.runner.execute(payload, ctx);
  }
}
