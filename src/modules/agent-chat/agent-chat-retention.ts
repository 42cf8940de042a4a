import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { RetentionPruner } from '@modules/retention';
import { ApprovalsRepository } from './approvals.repository';

/**
 * Agent Chat's tables under retention: resolved external-agent approval requests
 * (GATEWAY_RETENTION_AGENT_CHAT_APPROVALS_MAX_AGE / _MAX_COUNT; pending ones and grants are never pruned by age).
 */
@Injectable()
export class AgentChatRetention {
  constructor(
    private readonly config: AppConfig,
    private readonly approvals: ApprovalsRepository,
  ) {}

  @RetentionPruner('agent_chat_approvals')
  async approvalRequests() {
    const { maxAgeMs, maxCount } = this.config.tasks.retention.agentChatApprovals;
    return { ...(await this.approvals.prune(new Date(Date.now() - maxAgeMs), maxCount)), max_age_ms: maxAgeMs, max_count: maxCount };
  }
}
