/** The OpenAPI document of the HTTP surface (docs/design.md §12): response decorators, the compile-time check, build and serve. */
export {
  ApiEnvelope,
  ApiEnvelopes,
  ApiSse,
  envelopeSchema,
  type DataShape,
  type EnvelopeOptions,
  type FrameShape,
  type SseOptions,
} from './api-responses.decorator';
export type { Assert, Documents, Returned } from './documents';
export { buildOpenApiDocument, serveOpenApi, OPENAPI_PATH, type OpenApiOptions } from './openapi-document';
