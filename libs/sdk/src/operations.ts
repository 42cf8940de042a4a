import type { paths } from './generated/schema';

/** Request and response types of an operation, read from the generated `paths` (openapi-typescript). */

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The operation of `path` under `method` (never when the path has none). */
export type Operation<P extends keyof paths, M extends HttpMethod> = Exclude<paths[P][M], undefined>;

/** The paths that have an operation under `method`. */
export type PathsWith<M extends HttpMethod> = { [P in keyof paths]: [Operation<P, M>] extends [never] ? never : P }[keyof paths];

type ParametersOf<O> = O extends { parameters: infer X } ? X : object;
type PathParams<O> = ParametersOf<O> extends { path: infer X } ? X : never;
type QueryParams<O> = ParametersOf<O> extends { query?: infer X } ? Exclude<X, undefined> : never;
export type JsonBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** Per-request options beside the operation's own parameters. */
export interface RequestOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Retry this request on network errors and 5xx/429 (default: when it is safe to, see README). */
  retry?: boolean;
  /** `client_request_id` to send with an operation that accepts it (default: a fresh UUID per call, kept across retries). */
  idempotencyKey?: string;
}

/** Any operation's init, as the client reads it at run time. */
export type LooseInit = RequestOptions & { path?: object; query?: object; body?: unknown };

/** What a call takes: `path` when the route has path parameters, `query` when it has a query, `body` when it has one. */
export type RequestInit<O> = RequestOptions &
  ([PathParams<O>] extends [never] ? { path?: undefined } : { path: PathParams<O> }) &
  ([QueryParams<O>] extends [never] ? { query?: undefined } : { query?: QueryParams<O> }) &
  ([JsonBody<O>] extends [never] ? { body?: undefined } : { body: JsonBody<O> });

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** The init argument is optional when nothing in it is required. */
export type InitArgs<O> = [RequiredKeys<RequestInit<O>>] extends [never] ? [init?: RequestInit<O>] : [init: RequestInit<O>];

type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : R extends { content?: never } ? undefined : never;
type SuccessStatus = 200 | 201 | 202 | 203 | 204;

/** The JSON a successful answer carries (the union over its 2xx statuses; `undefined` for 204). */
export type SuccessBody<O> = { [S in keyof ResponsesOf<O>]: S extends SuccessStatus ? JsonOf<ResponsesOf<O>[S]> : never }[keyof ResponsesOf<O>];
