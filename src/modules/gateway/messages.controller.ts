import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { CountTokensService } from './count-tokens.service';
import { IngressService } from './ingress.service';

/** Anthropic-compatible ingress, served by any provider (native passthrough or translation). */
@Controller('v1')
export class MessagesController {
  constructor(
    private readonly ingress: IngressService,
    private readonly tokens: CountTokensService,
  ) {}

  @ApiOperation({ summary: 'Create a message (Anthropic Messages API)' })
  @Post('messages')
  @HttpCode(200)
  create(@CurrentPrincipal() caller: Principal, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.ingress.handle('anthropic', request, reply, caller);
  }

  /** Anthropic's shape (`{input_tokens}`); `X-Runtime-Token-Count` says whether the provider counted (`exact`) or Hecate estimated. */
  @ApiOperation({ summary: "Count a message's input tokens" })
  @Post('messages/count_tokens')
  @HttpCode(200)
  async countTokens(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<{ input_tokens: number }> {
    const count = await this.tokens.count(body);
    void reply.header('x-runtime-token-count', count.source).header('x-runtime-model', count.model);
    if (count.provider) void reply.header('x-runtime-provider', count.provider);
    return { input_tokens: count.input_tokens };
  }
}
