/**
 * @hecate/sdk — a typed client for Hecate's product API (`/hecate/v1`). Paths, parameters, bodies and answers are
 * generated from the server's OpenAPI document; stream resumption, retries and errors are written by hand.
 */
export { HecateClient, type HecateClientOptions, type HecateResponse, type RetryPolicy } from './client';
export { HecateError, type HecateErrorType } from './errors';
export {
  HecateStreams,
  type ActiveSessionsFrame,
  type AgentChatFrame,
  type ReconnectPolicy,
  type RunLiveDone,
  type RunLiveFrame,
  type RunStreamFrame,
  type StreamOptions,
} from './streams';
export { LiveReply } from './live-reply';
export { readSseFrames, type SseFrame } from './sse';
export type { HttpMethod, InitArgs, JsonBody, Operation, PathsWith, RequestInit, RequestOptions, SuccessBody } from './operations';
export type { components, operations, paths } from './generated/schema';

import type { components } from './generated/schema';

/** The document's named schemas: `Schemas['Task']`, `Schemas['AgentChatSession']`, `Schemas['ErrorType']`, … */
export type Schemas = components['schemas'];
