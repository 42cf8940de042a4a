import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RequestOrigin } from '@core/context/request-context';
import { requestIds } from './request-id';

/** The request's ids (X-Request-Id, trace id), for services that record where their work came from. */
export const Origin = createParamDecorator((_data: unknown, ctx: ExecutionContext): RequestOrigin =>
  requestIds(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
