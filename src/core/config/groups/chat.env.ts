import { Type } from 'class-transformer';
import { IsInt, IsNumber, IsOptional, IsString, Max, Min } from 'class-validator';
import { bool, duration, IsBooleanString, IsDuration } from '../config-validators';

/** Chat sessions: compaction, in-flight generation ownership, stop and list limits. */
export class ChatEnv {
  /** Compact before a generation when the active path's estimated tokens exceed this share of the context window. */
  @IsOptional() @Type(() => Number) @IsNumber() @Min(0.05) @Max(1) GATEWAY_CHAT_COMPACTION_RATIO?: number;
  /** Model that writes compaction summaries (default: the turn's model, else GATEWAY_DEFAULT_MODEL). */
  @IsOptional() @IsString() GATEWAY_CHAT_COMPACTION_MODEL?: string;
  @IsOptional() @IsString() GATEWAY_CHAT_COMPACTION_PROVIDER?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(1000) GATEWAY_CHAT_COMPACTION_KEEP_LAST_MESSAGES?: number;
  @IsOptional() @IsBooleanString() GATEWAY_CHAT_AUTO_COMPACTION_ENABLED?: string;
  /** How often the process streaming a generation refreshes its ownership row. */
  @IsOptional() @IsDuration() GATEWAY_CHAT_GENERATION_HEARTBEAT_INTERVAL?: string;
  /** A generation whose owner has not refreshed it for this long is treated as dead (its leaf is free again). */
  @IsOptional() @IsDuration() GATEWAY_CHAT_GENERATION_STALE_AFTER?: string;
  /** How long POST …/stop waits for the owning process to persist the partial reply before doing it itself. */
  @IsOptional() @IsDuration() GATEWAY_CHAT_STOP_TIMEOUT?: string;
  /**
   * Commit `/v1/chat/completions` session recordings without waiting for the WAL flush (Postgres
   * synchronous_commit=off for that transaction only). A Postgres crash can lose the last ~200 ms of
   * recordings, never corrupt them; the client's next request replays its history and the recording diff
   * re-adds what was lost. Server-side turns always commit synchronously.
   */
  @IsOptional() @IsBooleanString() GATEWAY_CHAT_RECORD_ASYNC_COMMIT?: string;
  /** Default page size of GET /hecate/v1/chat/sessions. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) GATEWAY_CHAT_SESSIONS_LIMIT?: number;
}

export interface ChatConfig {
  compaction: { ratio: number; model: string | undefined; provider: string | undefined; keepLastMessages: number; autoEnabled: boolean };
  generation: { heartbeatMs: number; staleAfterMs: number; stopTimeoutMs: number };
  sessionsLimit: number;
  recordAsyncCommit: boolean;
}

export function checkChatEnv(env: ChatEnv): string[] {
  const heartbeat = duration(env.GATEWAY_CHAT_GENERATION_HEARTBEAT_INTERVAL, 5_000);
  const stale = duration(env.GATEWAY_CHAT_GENERATION_STALE_AFTER, 30_000);
  if (env.GATEWAY_CHAT_GENERATION_STALE_AFTER !== undefined && stale < 2 * heartbeat) {
    return ['GATEWAY_CHAT_GENERATION_STALE_AFTER: must be at least twice GATEWAY_CHAT_GENERATION_HEARTBEAT_INTERVAL'];
  }
  if (heartbeat <= 0) return ['GATEWAY_CHAT_GENERATION_HEARTBEAT_INTERVAL: must be positive'];
  return [];
}

export function chatConfig(env: ChatEnv): ChatConfig {
  const heartbeatMs = duration(env.GATEWAY_CHAT_GENERATION_HEARTBEAT_INTERVAL, 5_000);
  return {
    compaction: {
      ratio: env.GATEWAY_CHAT_COMPACTION_RATIO ?? 0.8,
      model: env.GATEWAY_CHAT_COMPACTION_MODEL?.trim() || undefined,
      provider: env.GATEWAY_CHAT_COMPACTION_PROVIDER?.trim() || undefined,
      keepLastMessages: env.GATEWAY_CHAT_COMPACTION_KEEP_LAST_MESSAGES ?? 4,
      autoEnabled: bool(env.GATEWAY_CHAT_AUTO_COMPACTION_ENABLED, true),
    },
    generation: {
      heartbeatMs,
      staleAfterMs: duration(env.GATEWAY_CHAT_GENERATION_STALE_AFTER, Math.max(30_000, 3 * heartbeatMs)),
      stopTimeoutMs: duration(env.GATEWAY_CHAT_STOP_TIMEOUT, 5_000),
    },
    sessionsLimit: env.GATEWAY_CHAT_SESSIONS_LIMIT ?? 50,
    recordAsyncCommit: bool(env.GATEWAY_CHAT_RECORD_ASYNC_COMMIT, true),
  };
}
