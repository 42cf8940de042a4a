import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { TurnApprovalsService } from '@modules/approvals';
import { RetentionPruner } from '@modules/retention';

/**
 * Agent Chat's rows under retention: resolved external-agent approval requests
 * (GATEWAY_RETENTION_AGENT_CHAT_APPROVALS_MAX_AGE / _MAX_COUNT; pending ones are never pruned, grants by their expiry).
 */
@Injectable()
export class AgentChatRetention {
  constructor(
    private readonly config: AppConfig,
    private readonly approvals: TurnApprovalsService,
  ) {}

  @RetentionPruner('agent_chat_approvals')
  async approvalRequests() {
    const { maxAgeMs, maxCount } = this.config.tasks.retention.agentChatApprovals;
    return { ...(await this.approvals.prune(new Date(Date.now() - maxAgeMs), maxCount)), max_age_ms: maxAgeMs, max_count: maxCount };
  }
}
