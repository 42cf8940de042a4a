import { applyDecorators, RequestMethod, type Type } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA } from '@nestjs/common/constants';
import { ApiExtraModels, ApiHeader, ApiResponse, DECORATORS, getSchemaPath, type ReferenceObject, type SchemaObject } from '@nestjs/swagger';

/** A documented class, a list of one (`[Class]`), or a literal schema. */
export type DataShape = Type<unknown> | [Type<unknown>] | SchemaObject;

export interface EnvelopeOptions {
  /** The answer's status when the handler sends it itself (`@Res()`); otherwise read from the route (@HttpCode, method). */
  status?: number;
  description?: string;
  /** Fields beside `object` and `data` (a page's cursor). */
  extra?: Record<string, SchemaObject>;
}

const isClass = (shape: DataShape): shape is Type<unknown> => typeof shape === 'function';

function dataSchema(shape: DataShape, models: Type<unknown>[]): SchemaObject | ReferenceObject {
  if (Array.isArray(shape)) {
    models.push(shape[0]);
    return { type: 'array', items: { $ref: getSchemaPath(shape[0]) } };
  }
  if (isClass(shape)) {
    models.push(shape);
    return { $ref: getSchemaPath(shape) };
  }
  return shape;
}

/** The schema of `{object, data}` (docs/design.md §6), `object` one literal; its classes are added to `models`. */
export function envelopeSchema(object: string, data: DataShape, models: Type<unknown>[], extra: Record<string, SchemaObject> = {}): SchemaObject {
  return {
    type: 'object',
    required: ['object', 'data', ...Object.keys(extra)],
    properties: { object: { type: 'string', enum: [object] }, data: dataSchema(data, models), ...extra },
  };
}

/** The status Nest answers with: @HttpCode, else 201 for POST and 200 otherwise. */
function routeStatus(handler: object): number {
  const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
  if (method === undefined) throw new Error('@ApiEnvelope/@ApiSse read the route: put them above @Get/@Post/… and @HttpCode');
  return (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (method === RequestMethod.POST ? 201 : 200);
}

/**
 * A method decorator that documents a response once the route's own decorators (below it) have run. The CLI plugin's
 * guess (a bare entry under the route's default status, e.g. 201 for a POST that answers 200 through `@Res()`) is
 * dropped: what is documented here is what the route answers.
 */
function documented(build: (status: number) => MethodDecorator, status?: number): MethodDecorator {
  return (target, key, descriptor) => {
    const handler = descriptor.value as object;
    const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, handler) as
      Record<string, { schema?: unknown; type?: unknown; content?: unknown }> | undefined;
    for (const [code, entry] of Object.entries(responses ?? {})) if (!entry.schema && !entry.type && !entry.content) delete responses![code];
    build(status ?? routeStatus(handler))(target, key, descriptor);
  };
}

/** What a documented shape promises a handler returns in `data`. */
type Promised<S> = S extends [Type<infer T>] ? T[] : S extends Type<infer T> ? T : unknown;

/**
 * A decorator that only fits a handler whose `data` the compiler can assign to the documented shape (or a handler
 * that answers through `@Res()` itself).
 */
export type EnvelopeDecorator<D> = <F extends (...args: never[]) => Promise<{ data: D } | void> | { data: D }>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<F>,
) => void;

/**
 * Documents a `{object, data}` answer of a /hecate/v1 route: `data` is one `model`, a list (`[model]`) or a schema.
 * The handler's returned `data` must be assignable to it (checked by the compiler).
 */
export function ApiEnvelope<S extends DataShape>(object: string, data: S, options: EnvelopeOptions = {}): EnvelopeDecorator<Promised<S>> {
  return documented((status) => {
    const models: Type<unknown>[] = [];
    const schema = envelopeSchema(object, data, models, options.extra);
    return applyDecorators(ApiExtraModels(...models), ApiResponse({ status, description: options.description ?? object, schema }));
  }, options.status) as EnvelopeDecorator<Promised<S>>;
}

/** One answer with alternative envelopes under one status (e.g. one trace or a list of them). */
export function ApiEnvelopes(variants: Array<[object: string, data: DataShape]>, options: Omit<EnvelopeOptions, 'extra'> = {}): MethodDecorator {
  return documented((status) => {
    const models: Type<unknown>[] = [];
    const oneOf = variants.map(([object, data]) => envelopeSchema(object, data, models));
    return applyDecorators(
      ApiExtraModels(...models),
      ApiResponse({ status, description: options.description ?? variants.map((v) => v[0]).join(' | '), schema: { oneOf } }),
    );
  }, options.status);
}

/** A frame's JSON `data`: a shape, `[object, shape]` for a `{object, data}` envelope, or `{oneOf}` alternatives. */
export type FrameShape = DataShape | [object: string, data: DataShape] | { oneOf: DataShape[] };

const isAlternatives = (shape: FrameShape): shape is { oneOf: DataShape[] } =>
  typeof shape === 'object' && !Array.isArray(shape) && Array.isArray(shape.oneOf) && shape.oneOf.some((s) => typeof s === 'function');

function frameSchema(shape: FrameShape, models: Type<unknown>[]): SchemaObject | ReferenceObject {
  if (isEnvelope(shape)) return envelopeSchema(shape[0], shape[1], models);
  if (isAlternatives(shape)) return { oneOf: shape.oneOf.map((s) => dataSchema(s, models)) };
  return dataSchema(shape as DataShape, models);
}

/** Frames the one SSE writer sends on any resumable stream: a failure to resume from, and the shutdown hint. */
const CONTROL_FRAMES: Record<string, SchemaObject> = {
  error: {
    type: 'object',
    description: 'The stream failed; reconnect with Last-Event-ID.',
    properties: { error: { type: 'object', additionalProperties: true } },
  },
  reconnect: {
    type: 'object',
    description: 'The server is shutting down (sent with `retry:`); reconnect with Last-Event-ID.',
    properties: { reason: { type: 'string' } },
  },
};

const isEnvelope = (shape: FrameShape): shape is [string, DataShape] => Array.isArray(shape) && typeof shape[0] === 'string';

export interface SseOptions {
  /** The answer's status when the handler sends it itself (`@Res()`); otherwise read from the route. */
  status?: number;
  /** What `Last-Event-ID` resumes after; omitted for a stream that does not resume. */
  lastEventId?: string;
  /** The JSON answer under the same status when the request does not ask for a stream (`stream: false`). */
  json?: [object: string, data: DataShape];
}

/**
 * Documents a Server-Sent Events answer. `frames` maps each frame's `event:` to the schema of its JSON `data`; the map
 * is the response's `x-sse-frames` and the schemas are components, so clients can type what they parse.
 */
export function ApiSse(description: string, frames: Record<string, FrameShape>, options: SseOptions = {}): MethodDecorator {
  return documented((status) => {
    const models: Type<unknown>[] = [];
    const framesSchema = Object.fromEntries(Object.entries({ ...frames, ...CONTROL_FRAMES }).map(([event, shape]) => [event, frameSchema(shape, models)]));
    const content: Record<string, { schema: SchemaObject }> = { 'text/event-stream': { schema: { type: 'string' } } };
    if (options.json) content['application/json'] = { schema: envelopeSchema(options.json[0], options.json[1], models) };
    const resume = options.lastEventId ? [ApiHeader({ name: 'Last-Event-ID', required: false, description: options.lastEventId })] : [];
    return applyDecorators(...resume, ApiExtraModels(...models), ApiResponse({ status, description, content, ...{ 'x-sse-frames': framesSchema } }));
  }, options.status);
}
