import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { ErrorType } from '@contracts/errors';
import { request, type Loose } from '../../support/http';
import { embeddedEnv, startServer, type ServerProcess } from '../../support/server-process';

/**
 * `GET /openapi.json` of the built server (OpenAPI 3.1, from the controllers and DTOs): valid, public, the same document
 * the SDK's types are generated from, and complete — every /hecate/v1 route of the api role documents a 2xx answer
 * with a schema, its request body (a DTO) when it reads one, and the error envelope.
 */
describe('OpenAPI document', () => {
  let server: ServerProcess;
  let doc: Loose;
  /** The built server's own modules (the routes it mounts, the error types it documents). */
  let built: { controllers: Type[]; errorTypes: readonly string[] };

  beforeAll(async () => {
    const dist = resolve(__dirname, '../../..', process.env.HECATE_DIST ?? 'dist', 'src');
    const { ApiModule } = (await import(join(dist, 'api.module.js'))) as { ApiModule: { controllers: Type[] } };
    const { API_ERROR_TYPES } = (await import(join(dist, 'openapi.js'))) as { API_ERROR_TYPES: readonly string[] };
    built = { controllers: ApiModule.controllers, errorTypes: API_ERROR_TYPES };
    server = await startServer('all', { ...embeddedEnv(), GATEWAY_AUTH_TOKEN: 'openapi-e2e-operator-token-0123456789' });
    const res = await request(server.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.body;
  }, 120_000);
  afterAll(() => server?.stop());

  /** Every route the api role mounts, from the controllers' own metadata. */
  const routes = () =>
    built.controllers.flatMap((controller) => {
      const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      const proto = controller.prototype as Record<string, unknown>;
      return Object.getOwnPropertyNames(proto).flatMap((name) => {
        const handler = proto[name] as object;
        const method = typeof handler === 'function' ? (Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined) : undefined;
        if (method === undefined) return [];
        const sub = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '');
        const path = `/${[base, sub].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/').replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, unknown>;
        const readsBody = Object.keys(args).some((key) => Number(key.split(':')[0]) === RouteParamtypes.BODY);
        return [{ route: `${RequestMethod[method]} ${path}`, method: RequestMethod[method].toLowerCase(), path, readsBody }];
      });
    });
  const product = () => routes().filter((r) => r.path.startsWith('/hecate/v1/'));

  const schemaAt = (ref: string): Loose => doc.components.schemas[ref.replace('#/components/schemas/', '')];

  it('is OpenAPI 3.1 that Redocly validates without a problem, served without credentials', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const config = await createConfig({
      rules: {
        struct: 'error',
        'no-unresolved-refs': 'error',
        'operation-operationId-unique': 'error',
        'path-parameters-defined': 'error',
        'operation-2xx-response': 'error',
        'no-identical-paths': 'error',
        'no-enum-type-mismatch': 'error',
        'no-path-trailing-slash': 'error',
      },
    });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
    expect(doc.components.securitySchemes).toMatchObject({
      bearer: { type: 'http', scheme: 'bearer' },
      api_key: { type: 'apiKey', in: 'header', name: 'x-api-key' },
    });
    expect(doc.paths['/healthz'].get.security).toEqual([{}]);
  });

  it('is the document the SDK types are generated from', () => {
    const generated = JSON.parse(readFileSync(resolve(__dirname, '../../../libs/sdk/openapi.json'), 'utf8')) as unknown;
    expect(generated).toEqual(doc);
  });

  it('documents every /hecate/v1 route with a 2xx answer and its schema, and the error envelope', () => {
    expect(product().length).toBeGreaterThan(80);
    const undocumented: string[] = [];
    for (const r of product()) {
      const op = doc.paths[r.path]?.[r.method];
      if (!op) {
        undocumented.push(`${r.route}: not in the document`);
        continue;
      }
      const ok = Object.entries(op.responses as Record<string, Loose>).filter(([status]) => /^2\d\d$/.test(status));
      if (ok.length === 0) undocumented.push(`${r.route}: no 2xx answer`);
      for (const [status, response] of ok) {
        if (status === '204') continue;
        const media = Object.entries((response.content ?? {}) as Record<string, Loose>);
        if (media.length === 0 || media.some(([, m]) => !m.schema)) undocumented.push(`${r.route}: ${status} without a schema`);
        const json = response.content?.['application/json']?.schema;
        const alternatives = json ? (json.oneOf ?? [json]) : [];
        for (const s of alternatives) {
          if (!(s.required?.includes('object') && s.properties?.object?.enum?.length === 1 && s.properties?.data)) {
            undocumented.push(`${r.route}: ${status} is not an {object, data} envelope`);
          }
        }
      }
      if (op.responses.default?.content?.['application/json']?.schema?.$ref !== '#/components/schemas/ErrorEnvelope')
        undocumented.push(`${r.route}: no error envelope`);
    }
    expect(undocumented).toEqual([]);
  });

  /** Every operation of the document: `METHOD path` and the operation object. */
  const operations = () =>
    Object.entries(doc.paths as Record<string, Loose>).flatMap(([path, item]) =>
      Object.entries(item as Record<string, Loose>).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, path, op })),
    );

  it('gives every operation a summary of its own, short enough for the reference sidebar', () => {
    const ops = operations();
    expect(ops.length).toBe(routes().length);
    const without = ops.filter(({ op }) => typeof op.summary !== 'string' || op.summary.trim() === '').map((o) => o.route);
    expect(without).toEqual([]);
    const tooLong = ops.filter(({ op }) => op.summary.length > 60).map(({ route, op }) => `${route}: ${op.summary}`);
    expect(tooLong).toEqual([]);
    const byText = new Map<string, string[]>();
    for (const { route, op } of ops) byText.set(String(op.summary).toLowerCase(), [...(byText.get(String(op.summary).toLowerCase()) ?? []), route]);
    expect([...byText.entries()].filter(([, list]) => list.length > 1)).toEqual([]);
    // The handlers' doc comments stay, as descriptions.
    expect(doc.paths['/hecate/v1/tasks/{task_id}/runs/{run_id}/live'].get).toMatchObject({
      summary: "Stream an agent run's live output",
      description: expect.stringContaining('resumable by index'),
    });
  });

  it('names every path parameter in snake_case, once in the path and once in the parameters', () => {
    const wrong: string[] = [];
    for (const { route, path, op } of operations()) {
      const inPath = [...path.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
      const declared = ((op.parameters ?? []) as Loose[]).filter((p) => p.in === 'path').map((p) => String(p.name));
      for (const name of inPath) if (!/^[a-z][a-z0-9_]*$/.test(name)) wrong.push(`${route}: {${name}} is not snake_case`);
      if ([...declared].sort().join() !== [...inPath].sort().join()) wrong.push(`${route}: declares ${declared.join(', ') || 'none'}`);
    }
    expect(wrong).toEqual([]);
    expect(doc.paths['/hecate/v1/tasks/{task_id}/runs/{run_id}/stream'].get.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'task_id', in: 'path' }), expect.objectContaining({ name: 'run_id', in: 'path' })]),
    );
  });

  it('documents the request body (a DTO with its fields) of every route that reads one, and none elsewhere', () => {
    const wrong: string[] = [];
    for (const r of product()) {
      const body = doc.paths[r.path]?.[r.method]?.requestBody;
      if (!r.readsBody) {
        if (body) wrong.push(`${r.route}: documents a body it does not read`);
        continue;
      }
      const ref = body?.content?.['application/json']?.schema?.$ref as string | undefined;
      const schema = ref ? schemaAt(ref) : undefined;
      if (!schema || Object.keys(schema.properties ?? {}).length === 0) wrong.push(`${r.route}: its body has no DTO schema`);
    }
    expect(wrong).toEqual([]);
    // The CLI plugin read the DTOs' types and class-validator rules.
    expect(schemaAt('#/components/schemas/CreateTaskDto').properties.timeout_ms).toMatchObject({ type: 'number', minimum: 0 });
    expect(schemaAt('#/components/schemas/PostAgentChatMessageDto').required).toEqual(['content']);
  });

  it('lists the error types of the seed and of the code as an enum', () => {
    const types = doc.components.schemas.ErrorType.enum as string[];
    expect(types).toEqual([...new Set(built.errorTypes)].sort());
    const seed = [
      ...Object.values(ErrorType),
      'agent_chat.agent_session_busy',
      'agent_chat.model_capability_required',
      'agent_chat.workspace_required',
      'agent_chat.model_required',
      'agent_chat.runtime_kind_invalid',
      'agent_chat.runtime_mismatch',
      'agent_chat.adapter_not_found',
      'agent_chat.session_stopping',
      'agent_chat.session_not_running',
      'agent_chat.session_limit_exceeded',
      'agent_chat.session_duration_limit_exceeded',
      'agent_chat.session_idle_timeout',
    ];
    expect(types).toEqual(expect.arrayContaining(seed));
    expect(doc.components.schemas.ErrorBody.required).toEqual(['type', 'message', 'user_message', 'operator_action']);
  });
});
