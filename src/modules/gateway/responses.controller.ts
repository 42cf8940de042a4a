import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { InvalidRequestError } from '@core/http/domain-error';
import type { Json } from '@modules/inference';
import { ResponsesService } from './responses.service';

function listQuery(limit?: string, order?: string, after?: string): { limit?: number; order?: 'asc' | 'desc'; after?: string } {
  const n = limit === undefined ? undefined : Number(limit);
  if (n !== undefined && !(Number.isInteger(n) && n >= 1 && n <= 100))
    throw new InvalidRequestError('limit must be an integer from 1 to 100', { details: { param: 'limit' } });
  if (order !== undefined && order !== 'asc' && order !== 'desc') throw new InvalidRequestError('order must be asc or desc', { details: { param: 'order' } });
  return { limit: n, order, after: after || undefined };
}

/** The OpenAI Responses API (`/v1/responses`), served by any provider. The body is validated by hand (ResponsesService). */
@Controller('v1/responses')
export class ResponsesController {
  constructor(private readonly responses: ResponsesService) {}

  @ApiOperation({ summary: 'Create a response (OpenAI Responses API)' })
  @Post()
  @HttpCode(200)
  create(@CurrentPrincipal() caller: Principal, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.responses.create(caller, request, reply);
  }

  @ApiOperation({ summary: 'Get a stored response' })
  @Get(':response_id')
  get(@CurrentPrincipal() caller: Principal, @Param('response_id') id: string): Promise<Json> {
    return this.responses.get(caller, id);
  }

  @ApiOperation({ summary: 'Delete a stored response' })
  @Delete(':response_id')
  delete(@CurrentPrincipal() caller: Principal, @Param('response_id') id: string): Promise<Json> {
    return this.responses.delete(caller, id);
  }

  @ApiOperation({ summary: "List a response's input items" })
  @Get(':response_id/input_items')
  inputItems(
    @CurrentPrincipal() caller: Principal,
    @Param('response_id') id: string,
    @Query('limit') limit?: string,
    @Query('order') order?: string,
    @Query('after') after?: string,
  ): Promise<Json> {
    return this.responses.inputItems(caller, id, listQuery(limit, order, after));
  }
}
