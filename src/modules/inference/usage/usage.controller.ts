import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { tenantScope, UsageQueryDto, UsageSeriesQueryDto } from './usage.dto';
import { ApiEnvelope } from '@core/http/openapi';
import { UsageEventDto, UsageSeriesDto, UsageSummaryDto } from './usage.dto';
import { UsageLedgerService } from './usage-ledger.service';

@Controller('hecate/v1/usage')
export class UsageController {
  constructor(private readonly ledger: UsageLedgerService) {}

  @ApiEnvelope('usage_summary', UsageSummaryDto)
  @ApiOperation({ summary: 'Summarise usage' })
  @Get('summary')
  async summary(@CurrentPrincipal() caller: Principal, @Query() q: UsageQueryDto) {
    return { object: 'usage_summary', data: await this.ledger.summary(this.filter(caller, q)) };
  }

  @ApiEnvelope('usage_events', [UsageEventDto])
  @ApiOperation({ summary: 'List usage events' })
  @Get('events')
  async events(@CurrentPrincipal() caller: Principal, @Query() q: UsageQueryDto) {
    return { object: 'usage_events', data: await this.ledger.events(this.filter(caller, q), q.limit ?? 100) };
  }

  @ApiEnvelope('usage_series', UsageSeriesDto)
  @ApiOperation({ summary: 'Get usage as a time series' })
  @Get('series')
  async series(@CurrentPrincipal() caller: Principal, @Query() q: UsageSeriesQueryDto) {
    return { object: 'usage_series', data: await this.ledger.series(this.filter(caller, q), q.bucket ?? 'hour', q.group_by ?? 'provider') };
  }

  private filter(caller: Principal, q: UsageQueryDto | UsageSeriesQueryDto) {
    return {
      tenantId: tenantScope(caller, q.tenant_id),
      since: q.since ? new Date(q.since) : undefined,
      until: q.until ? new Date(q.until) : undefined,
      provider: q.provider,
      model: q.model,
      requestId: 'request_id' in q ? q.request_id : undefined,
      apiKeyId: q.api_key_id,
      agentChatSessionId: 'agent_chat_session_id' in q ? q.agent_chat_session_id : undefined,
    };
  }
}
