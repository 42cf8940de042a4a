import { Controller, Get } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Principal } from '@core/context/request-context';
import { ApiEnvelope } from '@core/http/openapi';
import { CallerResponseDto, toCallerResponse } from './caller.dto';
import { CurrentPrincipal } from './current-principal.decorator';
import { AnyScope } from './require-scope.decorator';

@Controller('hecate/v1/whoami')
export class CallerController {
  /** The credential's kind, tenant and scopes: what a client may offer its user (docs/security.md, "Who is trusted"). */
  @ApiEnvelope('caller', CallerResponseDto)
  @AnyScope()
  @ApiOperation({ summary: 'Describe the calling credential' })
  @Get()
  whoami(@CurrentPrincipal() caller: Principal) {
    return { object: 'caller', data: toCallerResponse(caller) };
  }
}
