import { Type } from 'class-transformer';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { bool, duration, IsBooleanString, IsDuration } from '../config-validators';
import { installationKey, installationRoot } from '../installation';

/** The agent loop (execution_kind=agent_loop): turn cap, system prompt, per-call limits, the http_request tool. */
export class AgentEnv {
  /** Model calls per run before it stops with `turn_limit_exceeded`. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) GATEWAY_TASK_AGENT_LOOP_MAX_TURNS?: number;
  /** Operator layer of the system prompt (after the machine line, before AGENTS.md and the task's system_prompt). */
  @IsOptional() @IsString() GATEWAY_TASK_AGENT_SYSTEM_PROMPT?: string;
  /** max_tokens of each model call (also the budget check's worst case). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(16) GATEWAY_TASK_AGENT_MAX_TOKENS?: number;
  @IsOptional() @IsDuration() GATEWAY_TASK_HTTP_TIMEOUT?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1024) GATEWAY_TASK_HTTP_MAX_RESPONSE_BYTES?: number;
  /** Time limit of one grep or glob tool call (it runs in a worker thread, terminated at the limit). */
  @IsOptional() @IsDuration() GATEWAY_TASK_AGENT_SCAN_TIMEOUT?: string;
  /** A running tool's output as `tool_progress` frames on the run's live stream (never in the conversation). */
  @IsOptional() @IsBooleanString() GATEWAY_TOOL_PROGRESS_ENABLED?: string;
  /** Agent Chat guardrails (docs/api.md §4): turns per session, wall clock since the first turn, idle time; 0 = none. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_AGENT_CHAT_MAX_TURNS_PER_SESSION?: number;
  @IsOptional() @IsDuration() GATEWAY_AGENT_CHAT_MAX_SESSION_DURATION?: string;
  @IsOptional() @IsDuration() GATEWAY_AGENT_CHAT_IDLE_TIMEOUT?: string;
  /** Waiting items per session (queued-next prompts; pending guidance counted apart); 0 = none. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_AGENT_CHAT_MAX_QUEUED_ITEMS?: number;
  /** Bytes of one prompt, queued item or guidance message; 0 = none. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES?: number;
  /** How long `POST …/messages` (without `wait: false` or `stream: true`) waits for the turn before answering its state. */
  @IsOptional() @IsDuration() GATEWAY_AGENT_CHAT_WAIT_TIMEOUT?: string;
  /** The model `POST /hecate/v1/agent-chat/optimize-input[/stream]` rewrites drafts with when the request names none. */
  @IsOptional() @IsString() GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL?: string;
  /** External agents (ACP adapters, docs/api.md §4): where managed launchers live, operator-defined adapters (JSON array). */
  @IsOptional() @IsString() GATEWAY_AGENT_ADAPTERS_DIR?: string;
  /** The API contract's name for GATEWAY_AGENT_ADAPTERS_DIR (docs/api.md §4 refresh-launcher), read the same way. */
  @IsOptional() @IsString() HECATE_AGENT_ADAPTERS_DIR?: string;
  @IsOptional() @IsString() GATEWAY_AGENT_ADAPTERS?: string;
  /** An adapter process unused this long is closed (restored on the next turn); a turn's ceiling; a probe's ceiling. */
  @IsOptional() @IsDuration() GATEWAY_AGENT_ADAPTER_IDLE_TIMEOUT?: string;
  @IsOptional() @IsDuration() GATEWAY_AGENT_ADAPTER_TURN_TIMEOUT?: string;
  @IsOptional() @IsDuration() GATEWAY_AGENT_ADAPTER_PROBE_TIMEOUT?: string;
  /** One ACP message (line) larger than this ends the adapter's turn with a clear error. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(65536) GATEWAY_AGENT_ADAPTER_MAX_MESSAGE_BYTES?: number;
  /** The approval coordinator: prompt (ask the operator), auto (allow), deny; a prompt's timeout. */
  @IsOptional() @IsIn(['prompt', 'auto', 'deny']) GATEWAY_AGENT_ADAPTER_APPROVAL_MODE?: string;
  @IsOptional() @IsDuration() GATEWAY_AGENT_ADAPTER_APPROVAL_TIMEOUT?: string;
  @IsOptional() @IsString() GATEWAY_AGENT_ADAPTER_GATEWAY_URL?: string;
}

export interface AgentConfig {
  maxTurns: number;
  systemPrompt: string;
  maxTokens: number;
  http: { timeoutMs: number; maxResponseBytes: number };
  scanTimeoutMs: number;
  toolProgress: boolean;
  chat: {
    maxTurnsPerSession: number;
    maxSessionDurationMs: number;
    idleTimeoutMs: number;
    waitTimeoutMs: number;
    maxQueuedItems: number;
    maxContentBytes: number;
    /** Input optimisation's default model ('' = the request must name one). */
    optimizeInputModel: string;
  };
  adapters: {
    dir: string;
    /** GATEWAY_AGENT_ADAPTERS as given (validated by the catalog, which knows the shape). */
    operatorDefined: string;
    idleTimeoutMs: number;
    turnTimeoutMs: number;
    probeTimeoutMs: number;
    maxMessageBytes: number;
    approvalMode: 'prompt' | 'auto' | 'deny';
    approvalTimeoutMs: number;
    /**
     * Where metered adapters reach this gateway's ingress (GATEWAY_AGENT_ADAPTER_GATEWAY_URL, e.g. the api Service's
     * URL in Kubernetes); empty: the embedded server's own port, and none in scaled mode (adapters then use their own
     * credentials: cost `external`).
     */
    gatewayUrl: string;
  };
}

/**
 * Where an installation keeps its managed launchers (and installed adapter packages, and the adapters' homes) unless
 * told otherwise: under the user's cache, one directory per installation. A launcher points into its own
 * installation's node_modules, so a shared one broke every other installation on the machine once the checkout it
 * was written from was removed.
 */
export function defaultAdaptersDir(installRoot: string, cacheHome: string): string {
  return join(cacheHome, 'hecate', 'agent-adapters', installationKey(installRoot));
}

/** The adapters directory may be named by the project's variable or the API contract's; two different directories is an error. */
export function checkAgentEnv(env: AgentEnv): string[] {
  const ours = env.GATEWAY_AGENT_ADAPTERS_DIR;
  const seeds = env.HECATE_AGENT_ADAPTERS_DIR;
  return ours && seeds && resolve(ours) !== resolve(seeds)
    ? [
        'HECATE_AGENT_ADAPTERS_DIR: GATEWAY_AGENT_ADAPTERS_DIR names another directory; set one of them (the seed name HECATE_AGENT_ADAPTERS_DIR means the same)',
      ]
    : [];
}

export function agentConfig(env: AgentEnv): AgentConfig {
  return {
    maxTurns: env.GATEWAY_TASK_AGENT_LOOP_MAX_TURNS ?? 8,
    systemPrompt: env.GATEWAY_TASK_AGENT_SYSTEM_PROMPT ?? '',
    maxTokens: env.GATEWAY_TASK_AGENT_MAX_TOKENS ?? 4096,
    http: { timeoutMs: duration(env.GATEWAY_TASK_HTTP_TIMEOUT, 30_000), maxResponseBytes: env.GATEWAY_TASK_HTTP_MAX_RESPONSE_BYTES ?? 256 * 1024 },
    scanTimeoutMs: duration(env.GATEWAY_TASK_AGENT_SCAN_TIMEOUT, 10_000),
    toolProgress: bool(env.GATEWAY_TOOL_PROGRESS_ENABLED, true),
    chat: {
      maxTurnsPerSession: env.GATEWAY_AGENT_CHAT_MAX_TURNS_PER_SESSION ?? 0,
      maxSessionDurationMs: duration(env.GATEWAY_AGENT_CHAT_MAX_SESSION_DURATION, 0),
      idleTimeoutMs: duration(env.GATEWAY_AGENT_CHAT_IDLE_TIMEOUT, 0),
      waitTimeoutMs: duration(env.GATEWAY_AGENT_CHAT_WAIT_TIMEOUT, 600_000),
      maxQueuedItems: env.GATEWAY_AGENT_CHAT_MAX_QUEUED_ITEMS ?? 32,
      maxContentBytes: env.GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES ?? 512 * 1024,
      optimizeInputModel: env.GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL?.trim() ?? '',
    },
    adapters: {
      dir:
        env.GATEWAY_AGENT_ADAPTERS_DIR ??
        env.HECATE_AGENT_ADAPTERS_DIR ??
        defaultAdaptersDir(installationRoot() ?? process.cwd(), process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache')),
      operatorDefined: env.GATEWAY_AGENT_ADAPTERS ?? '',
      idleTimeoutMs: duration(env.GATEWAY_AGENT_ADAPTER_IDLE_TIMEOUT, 900_000),
      turnTimeoutMs: duration(env.GATEWAY_AGENT_ADAPTER_TURN_TIMEOUT, 1_800_000),
      probeTimeoutMs: duration(env.GATEWAY_AGENT_ADAPTER_PROBE_TIMEOUT, 30_000),
      maxMessageBytes: env.GATEWAY_AGENT_ADAPTER_MAX_MESSAGE_BYTES ?? 16 * 1024 * 1024,
      approvalMode: (env.GATEWAY_AGENT_ADAPTER_APPROVAL_MODE as 'prompt' | 'auto' | 'deny' | undefined) ?? 'prompt',
      approvalTimeoutMs: duration(env.GATEWAY_AGENT_ADAPTER_APPROVAL_TIMEOUT, 300_000),
      gatewayUrl: (env.GATEWAY_AGENT_ADAPTER_GATEWAY_URL ?? '').replace(/\/+$/, ''),
    },
  };
}
