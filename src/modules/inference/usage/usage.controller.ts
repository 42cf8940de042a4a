import { Controller, Get, Query } from '@nestjs/common';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { tenantScope, UsageQueryDto } from './usage.dto';
import { ApiEnvelope } from '@core/http/openapi';
import { UsageEventDto, UsageSummaryDto } from './usage.dto';
import { UsageLedgerService } from './usage-ledger.service';

@Controller('hecate/v1/usage')
export class UsageController {
  constructor(private readonly ledger: UsageLedgerService) {}

  @ApiEnvelope('usage_summary', UsageSummaryDto)
  @Get('summary')
  async summary(@CurrentPrincipal() caller: Principal, @Query() q: UsageQueryDto) {
    return { object: 'usage_summary', data: await this.ledger.summary(this.filter(caller, q)) };
  }

  @ApiEnvelope('usage_events', [UsageEventDto])
  @Get('events')
  async events(@CurrentPrincipal() caller: Principal, @Query() q: UsageQueryDto) {
    return { object: 'usage_events', data: await this.ledger.events(this.filter(caller, q), q.limit ?? 100) };
  }

  private filter(caller: Principal, q: UsageQueryDto) {
    return {
      tenantId: tenantScope(caller, q.tenant_id),
      since: q.since ? new Date(q.since) : undefined,
      until: q.until ? new Date(q.until) : undefined,
      provider: q.provider,
      model: q.model,
      requestId: q.request_id,
      apiKeyId: q.api_key_id,
      agentChatSessionId: q.agent_chat_session_id,
    };
  }
}
