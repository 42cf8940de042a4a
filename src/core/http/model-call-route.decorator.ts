import { RouteConfig } from '@nestjs/platform-fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    hecateModelCall?: boolean;
  }
}

/** Key of the Fastify route config that marks a product route making one model call per request. */
export const MODEL_CALL_ROUTE = 'hecateModelCall' as const;

/**
 * A `/hecate/v1` route that makes one model call per request (input optimisation): the gateway rate limit
 * (GATEWAY_RATE_LIMIT_RPM / _BURST) spends a token of the caller's bucket on it as on a `/v1` completion, before the
 * body is read. Method-level only: the hook reads the route's config.
 */
export const ModelCallRoute = (): MethodDecorator => RouteConfig({ [MODEL_CALL_ROUTE]: true });
