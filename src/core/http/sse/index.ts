/** The one SSE writer (docs/style.md rule 15): every stream — run streams, feeds, chat turns, the /v1 relays — writes through it. */
export { SseStream, sseCounters, renderFrame, sseFailure, closeAllForShutdown, SHUTDOWN_RETRY_MS, type SseFrame, type SseStreamOptions } from './sse-stream';
export { SseService, SseModule, type SseOpener } from './sse.service';
export { SseAdmission, StreamLimitError, STREAM_RETRY_AFTER_SECONDS, type StreamCaps } from './sse-admission';
