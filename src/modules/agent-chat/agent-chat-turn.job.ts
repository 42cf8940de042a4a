import { Injectable } from '@nestjs/common';
import type { JobPayloads } from '@contracts/jobs';
import { JobHandler } from '@core/queue/job-handler.decorator';
import type { JobContext } from '@core/queue/run-queue.port';
import { AgentChatTurnRunner } from './agent-chat-turn.runner';
import { AdapterSessionHost } from './adapter-session-host';

@Injectable()
export class AgentChatTurnJob {
  constructor(
    private readonly runner: AgentChatTurnRunner,
    private readonly adapters: AdapterSessionHost,
  ) {}

  @JobHandler('agent_chat.turn')
  handle(payload: JobPayloads['agent_chat.turn'], ctx: JobContext): Promise<void> {
    return this.runner.execute(payload, ctx);
  }

  @JobHandler('agent_chat.adapter_open')
  open(payload: JobPayloads['agent_chat.adapter_open']): Promise<void> {
    return this.adapters.open(payload.sessionId, payload.tenantId);
  }
}
