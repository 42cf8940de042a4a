import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal } from '@core/context/request-context';
import { IngressService } from './ingress.service';

/** Anthropic-compatible ingress, served by any provider (native passthrough or translation). */
@Controller('v1')
export class MessagesController {
  constructor(private readonly ingress: IngressService) {}

  @Post('messages')
  @HttpCode(200)
  create(@CurrentPrincipal() caller: Principal, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.ingress.handle('anthropic', request, reply, caller);
  }
}
