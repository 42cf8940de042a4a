/**
 * Types for `fake-upstream.js` (plain CommonJS, only `node:` built-ins).
 *
 *   import { startFakeUpstream } from '../support/fake-upstream/fake-upstream.js';
 *   const upstream = await startFakeUpstream();
 *   new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test' });
 *   new Anthropic({ baseURL: upstream.url, apiKey: 'sk-ant-test' }); // the Anthropic SDK appends /v1/... itself
 */
import type { IncomingHttpHeaders } from 'node:http';

export type Protocol = 'openai' | 'anthropic' | 'ollama';

/** Parsed JSON request body (the fields the fake looks at are typed, everything else is `unknown`). */
export interface RequestBody {
  model?: string;
  stream?: boolean;
  messages?: Array<{ role: string; content: unknown; [key: string]: unknown }>;
  system?: unknown;
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  /** Path without query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Raw request target including the query string. */
  url: string;
  /** Node's lower-cased request headers. */
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, or null when the body is empty or not JSON. */
  body: RequestBody | null;
  rawBody: string;
  /** `Date.now()` when the request body was fully received. */
  receivedAt: number;
  /** `x-api-key`, else the `Authorization: Bearer` token, else the raw `Authorization` value. */
  apiKey: string | undefined;
  /** Protocol inferred from the path (and `anthropic-version` for GET /v1/models). */
  protocol: Protocol;
  /** `body.model` when it is a string. */
  model: string | undefined;
  /** `body.stream === true`. */
  stream: boolean;
  /** Value of the `x-request-id` (OpenAI) / `request-id` (Anthropic) response header. */
  requestId: string;
  /** True when the client closed the connection before the response was complete. */
  aborted: boolean;
  /** `Date.now()` when the response closed (finished, aborted or dropped); undefined while open. */
  closedAt: number | undefined;
}

export interface MatchSpec {
  /** Exact path or RegExp. Without `path`, an object matcher only matches completion endpoints. */
  path?: string | RegExp;
  model?: string;
  stream?: boolean;
  protocol?: Protocol;
  method?: string;
}

export interface ToolCallSpec {
  name: string;
  /** Object (serialised with JSON.stringify) or an already-serialised JSON string. Default `{}`. */
  arguments?: string | Record<string, unknown>;
  /** Default: `call_fake<N>_<i>` (OpenAI) / `toolu_fake<N>_<i>` (Anthropic). */
  id?: string;
}

export interface ThinkingSpec {
  text: string;
  /** Default: a fixed base64 string. */
  signature?: string;
}

/**
 * A scripted behaviour. Rules are tried in the order they were added; the first whose `match`
 * accepts the request is used and consumed (`times`, default 1; `Infinity` = never consumed).
 * A rule without `match` applies to completion endpoints only (`POST /v1/chat/completions`,
 * `POST /v1/messages`), so health checks / model listing don't eat it.
 */
export interface ScriptRule {
  /** Model id | object matcher | predicate over the recorded request. */
  match?: string | MatchSpec | ((req: RecordedRequest) => boolean);
  times?: number;
  /** Requests whose api key (x-api-key or Bearer token) differs get a protocol-shaped 401. */
  requireKey?: string;
  /** HTTP status >= 400: respond with a protocol-shaped error (429 adds `retry-after: 1` unless `headers` sets it). */
  status?: number;
  /** Replaces the error body: objects are JSON-serialised, strings are sent verbatim. Also used for `errorAfterChunks` frames. */
  errorBody?: unknown;
  /** Reply text. Default: `echo: <last user text>` (or `Hello from fake upstream` without user text). */
  content?: string;
  /**
   * Number of streamed text deltas (thinking text and tool arguments are split the same way).
   * Default: global `chunks`, else one delta per word. Explicit `content` is never padded, so it
   * yields min(chunks, content.length) deltas; the default reply is repeated until it has enough characters.
   */
  chunks?: number;
  /** Delay between streamed deltas (the preamble goes out with the first delta). */
  chunkIntervalMs?: number;
  /** Delay before the status line / first byte. */
  latencyMs?: number;
  /** Accept the request and never respond (until the client gives up or `close()`). */
  hang?: boolean;
  /** Stream the preamble plus n deltas, then stall forever (non-streaming: half of the body, then stall). */
  hangAfterChunks?: number;
  /** Stream the preamble plus n deltas, then destroy the socket (non-streaming: half of the body). */
  dropAfterChunks?: number;
  /** Stream the preamble plus n deltas, then a protocol error event and end (non-streaming: a 500). */
  errorAfterChunks?: number;
  /** OpenAI: `tool_calls` (finish_reason `tool_calls`); Anthropic: `tool_use` blocks (stop_reason `tool_use`). */
  toolCalls?: ToolCallSpec[];
  /** Anthropic: a thinking block first; OpenAI: `reasoning_content` (DeepSeek/vLLM style). */
  thinking?: ThinkingSpec;
  /**
   * Continue a prefill, as Anthropic's Messages API does: when the request ends with an assistant message whose text
   * starts the reply, only the rest of the reply is sent. Default (global `continuePrefill`, else false): the reply is
   * sent whole, as OpenAI chat completions answer anew after a trailing assistant message.
   */
  continuePrefill?: boolean;
  /** Reported token usage (default: ceil(chars / 4)). */
  usage?: { input?: number; output?: number };
  /**
   * Either vocabulary is accepted and mapped: `end_turn|stop`, `max_tokens|length`, `tool_use|tool_calls`,
   * `stop_sequence`, `refusal|content_filter`; unknown values pass through unchanged.
   */
  stopReason?: string;
  /** Extra/overriding response headers (a null/undefined value removes a default header). */
  headers?: Record<string, string | number | string[] | null | undefined>;
}

export interface FakeUpstreamOptions {
  /** Default 0 (random free port). */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Global default for `ScriptRule.latencyMs`. */
  latencyMs?: number;
  /** Global default for `ScriptRule.chunks`. */
  chunks?: number;
  /** Global default for `ScriptRule.chunkIntervalMs`. */
  chunkIntervalMs?: number;
  /** Global default reply text (instead of the echo). */
  content?: string;
  /** Global default for `ScriptRule.continuePrefill`. */
  continuePrefill?: boolean;
  /** Global `requireKey`. */
  requireKey?: string;
  /** Initial model list (default `DEFAULT_MODELS`). */
  models?: readonly string[];
  /** Keep `requests` (default true). Turn off for long benchmark runs; `requestCount` still counts. */
  record?: boolean;
}

export interface FakeUpstream {
  /** e.g. `http://127.0.0.1:PORT`. OpenAI base URL: `${url}/v1`; Anthropic SDK base URL: `url`. */
  readonly url: string;
  readonly port: number;
  /** Every request in arrival order (same array instance for the server's lifetime). */
  readonly requests: RecordedRequest[];
  /** Requests received since start or the last reset() (also counted when `record: false`). */
  readonly requestCount: number;
  /** Requests whose response has not closed yet (includes hanging ones). */
  readonly activeRequests: number;
  script(rule: ScriptRule): void;
  /** Clears rules, recorded requests and `requestCount`, and restores the initial model list. */
  reset(): void;
  /** What GET /v1/models and GET /api/tags return. */
  setModels(ids: readonly string[]): void;
  /** Resolves once `pred` holds; re-evaluated whenever a request arrives or a response closes. */
  waitFor(pred: (upstream: FakeUpstream) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves with `requests` once `requestCount >= n`. */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Closes the server and destroys every open socket (hanging requests included). */
  close(): Promise<void>;
}

export declare const DEFAULT_MODELS: readonly string[];
export declare const DEFAULT_REPLY: string;
export declare function startFakeUpstream(opts?: FakeUpstreamOptions): Promise<FakeUpstream>;
