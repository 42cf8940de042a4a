import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, type OperationObject, type PathItemObject, SwaggerModule } from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import { PUBLIC_ROUTE } from '@core/http/auth/public.decorator';

export const OPENAPI_PATH = '/openapi.json';

export interface OpenApiOptions {
  version: string;
  /** Every `error.type` the API answers with (the API contract's table and the modules' own dotted types). */
  errorTypes: readonly string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const ERROR_ENVELOPE = '#/components/schemas/ErrorEnvelope';

/** The API contract's error envelope (docs/api.md §4 "Error envelope"), `type` one of the stable codes. */
const errorSchemas = (errorTypes: readonly string[]) => ({
  ErrorType: { type: 'string', enum: [...new Set(errorTypes)].sort(), description: 'Stable machine code: branch on this, not on message text.' },
  ErrorBody: {
    type: 'object',
    required: ['type', 'message', 'user_message', 'operator_action'],
    properties: {
      type: { $ref: '#/components/schemas/ErrorType' },
      message: { type: 'string', description: 'The detailed gateway/runtime message.' },
      user_message: { type: 'string', description: 'The short operator-facing summary.' },
      operator_action: { type: 'string', description: 'The recommended next step.' },
      request_id: { type: 'string', description: 'Mirrors X-Request-Id; open GET /hecate/v1/traces?request_id=… with it.' },
      trace_id: { type: 'string', description: 'Mirrors X-Trace-Id.' },
    },
    additionalProperties: { description: 'Runtime-specific repair fields (task_id, latest_run_id, provider, limit_ms, …).' },
  },
  ErrorEnvelope: { type: 'object', required: ['error'], properties: { error: { $ref: '#/components/schemas/ErrorBody' } } },
});

/**
 * The OpenAPI 3.1 document of the app's routes, from the controllers and DTOs (@nestjs/swagger with its CLI plugin,
 * which reads the DTOs' types and class-validator rules at build time). Every /hecate/v1 operation answers errors with
 * the error envelope; `/v1/*` keeps its providers' shapes and is listed without schemas. An operation's `summary` is its
 * `@ApiOperation`; the handler's doc comment becomes its `description` (nest-cli.json `controllerKeyOfComment`).
 */
export function buildOpenApiDocument(app: INestApplication, options: OpenApiOptions): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Hecate')
    .setDescription(
      'Hecate product API (`/hecate/v1`): `{object, data}` envelopes, errors `{error:{type, message, user_message, operator_action, request_id, trace_id}}`. ' +
        '`/v1/*` is the OpenAI/Anthropic-compatible ingress (see those providers’ references).',
    )
    .setVersion(options.version)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key (`hk_…`) or the operator token (GATEWAY_AUTH_TOKEN).' }, 'bearer')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same credential as a header.' }, 'api_key')
    .addSecurityRequirements('bearer')
    .addSecurityRequirements('api_key')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...errorSchemas(options.errorTypes) } };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = (item as PathItemObject)[method] as OperationObject | undefined;
      if (!op) continue;
      if (path.startsWith('/hecate/')) {
        op.responses.default = { description: 'Error envelope', content: { 'application/json': { schema: { $ref: ERROR_ENVELOPE } } } };
      } else if (path.startsWith('/v1/')) {
        op.tags = ['Provider-compatible ingress (/v1)'];
        const shaped = 'OpenAI/Anthropic-shaped: request and response bodies follow the provider API this path mirrors.';
        op.description = op.description ? `${shaped} ${op.description}` : shaped;
      }
    }
  }
  return document;
}

/**
 * `GET /openapi.json`: the document, built and serialised once, on the first request rather than at boot (scanning
 * every route and DTO is a few hundred milliseconds of CPU that most api starts never need); public like /healthz
 * (it holds no tenant data).
 */
export function serveOpenApi(app: INestApplication, document: () => OpenAPIObject): void {
  let body: string | undefined;
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  fastify.get(OPENAPI_PATH, { config: { [PUBLIC_ROUTE]: true } }, (_request, reply) => {
    body ??= JSON.stringify(document());
    void reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
}
