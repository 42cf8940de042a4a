import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { NotFoundError } from '@core/http/domain-error';
import { tenantScope, TracesQueryDto } from './usage.dto';
import { ApiEnvelopes } from '@core/http/openapi';
import { GatewayTraceDto } from './usage.dto';
import { TraceStoreService } from './trace-store.service';

@Controller('hecate/v1/traces')
export class TracesController {
  constructor(private readonly traces: TraceStoreService) {}

  @ApiEnvelopes(
    [
      ['trace', GatewayTraceDto],
      ['traces', [GatewayTraceDto]],
    ],
    { description: "With `request_id`: that request's trace; otherwise the recent traces." },
  )
  @ApiOperation({ summary: 'List request traces' })
  @Get()
  async list(@CurrentPrincipal() caller: Principal, @Query() q: TracesQueryDto) {
    const scope = tenantScope(caller, q.tenant_id);
    if (q.request_id) {
      const found = await this.traces.find(q.request_id, scope);
      if (found.length === 0) {
        throw new NotFoundError(`no trace for request ${q.request_id}`, {
          operatorAction: 'Traces are kept in memory for GATEWAY_TRACES_MAX_AGE / _MAX_COUNT; check the request id.',
        });
      }
      return { object: 'trace', data: found[0] };
    }
    return { object: 'traces', data: this.traces.recent(scope, q.limit ?? 50) };
  }
}
