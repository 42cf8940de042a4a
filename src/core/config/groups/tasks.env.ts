import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { bool, csv, duration, IsBooleanString, IsDuration } from '../config-validators';

/** Approval gates of the task runtime (seed 003 "Approval policy configuration"). */
export const APPROVAL_POLICY_NAMES = ['shell_exec', 'git_exec', 'file_write', 'network_egress', 'read_file', 'all_tools'] as const;
export type ApprovalPolicyName = (typeof APPROVAL_POLICY_NAMES)[number];

/** Task runtime, event feeds and retention variables. */
export class TasksEnv {
  @IsOptional() @IsString() GATEWAY_TASK_APPROVAL_POLICIES?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(3600) GATEWAY_TASK_QUEUE_LEASE_SECONDS?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_MAX_CONCURRENT?: number;
  @IsOptional() @IsDuration() GATEWAY_TASK_RECONCILE_INTERVAL?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1024) GATEWAY_TASK_MAX_OUTPUT_BYTES?: number;
  @IsOptional() @IsDuration() GATEWAY_TASK_DEFAULT_TIMEOUT?: string;
  @IsOptional() @IsString() GATEWAY_WORKSPACES_DIR?: string;
  @IsOptional() @IsIn(['auto', 'bwrap', 'none']) GATEWAY_TASK_SANDBOX?: string;
  /** Host variables passed through the cleaned environment of task subprocesses. */
  @IsOptional() @IsString() PATH?: string;
  @IsOptional() @IsString() LANG?: string;
  @IsOptional() @IsString() LC_ALL?: string;
  @IsOptional() @IsString() TZ?: string;

  @IsOptional() @IsDuration() GATEWAY_SSE_HEARTBEAT_INTERVAL?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(4096) GATEWAY_SSE_MAX_BUFFER_BYTES?: number;

  @IsOptional() @IsBooleanString() GATEWAY_RETENTION_ENABLED?: string;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_INTERVAL?: string;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_RUN_EVENTS_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_RUN_EVENTS_MAX_COUNT?: number;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_RUN_ARTIFACTS_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_RUN_ARTIFACTS_MAX_COUNT?: number;
}

export interface TasksConfig {
  /** Active approval gates; `all_tools` is expanded to every gate. */
  approvalPolicies: ApprovalPolicyName[];
  leaseSeconds: number;
  /** 0 = no cluster-wide cap on running runs. */
  maxConcurrent: number;
  reconcileIntervalMs: number;
  maxOutputBytes: number;
  defaultTimeoutMs: number;
  workspacesDir: string;
  sandbox: 'auto' | 'bwrap' | 'none';
  /** The allowlisted host environment of task subprocesses (PATH, LANG, LC_ALL, TZ when set). */
  childEnv: Record<string, string>;
  sse: { heartbeatMs: number; maxBufferBytes: number };
  retention: {
    enabled: boolean;
    intervalMs: number;
    runEvents: { maxAgeMs: number; maxCount: number };
    runArtifacts: { maxAgeMs: number; maxCount: number };
  };
}

const HOUR = 3_600_000;

export function checkTasksEnv(env: TasksEnv): string[] {
  const unknown = csv(env.GATEWAY_TASK_APPROVAL_POLICIES, []).filter((p) => p !== 'none' && !(APPROVAL_POLICY_NAMES as readonly string[]).includes(p));
  return unknown.length > 0
    ? [
        `GATEWAY_TASK_APPROVAL_POLICIES: unknown polic${unknown.length > 1 ? 'ies' : 'y'} ${unknown.join(', ')}; known: ${APPROVAL_POLICY_NAMES.join(', ')}, none`,
      ]
    : [];
}

function childEnv(vars: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(vars)) if (v) out[k] = v;
  return out;
}

export function tasksConfig(env: TasksEnv): TasksConfig {
  // An empty variable reads as unset (the platform rule), so `none` is how every gate is disabled.
  const named = csv(env.GATEWAY_TASK_APPROVAL_POLICIES, ['shell_exec', 'git_exec', 'file_write']).filter((p) => p !== 'none') as ApprovalPolicyName[];
  const approvalPolicies = named.includes('all_tools') ? APPROVAL_POLICY_NAMES.filter((p) => p !== 'all_tools') : [...new Set(named)];
  return {
    approvalPolicies,
    leaseSeconds: env.GATEWAY_TASK_QUEUE_LEASE_SECONDS ?? 30,
    maxConcurrent: env.GATEWAY_TASK_MAX_CONCURRENT ?? 0,
    reconcileIntervalMs: duration(env.GATEWAY_TASK_RECONCILE_INTERVAL, 30_000),
    maxOutputBytes: env.GATEWAY_TASK_MAX_OUTPUT_BYTES ?? 4 * 1024 * 1024,
    defaultTimeoutMs: duration(env.GATEWAY_TASK_DEFAULT_TIMEOUT, 10 * 60_000),
    workspacesDir: env.GATEWAY_WORKSPACES_DIR ?? join(tmpdir(), 'hecate-workspaces'),
    sandbox: (env.GATEWAY_TASK_SANDBOX ?? 'auto') as TasksConfig['sandbox'],
    childEnv: childEnv({ PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: env.LANG, LC_ALL: env.LC_ALL, TZ: env.TZ }),
    sse: {
      heartbeatMs: duration(env.GATEWAY_SSE_HEARTBEAT_INTERVAL, 15_000),
      maxBufferBytes: env.GATEWAY_SSE_MAX_BUFFER_BYTES ?? 1024 * 1024,
    },
    retention: {
      enabled: bool(env.GATEWAY_RETENTION_ENABLED, false),
      intervalMs: duration(env.GATEWAY_RETENTION_INTERVAL, 15 * 60_000),
      runEvents: {
        maxAgeMs: duration(env.GATEWAY_RETENTION_RUN_EVENTS_MAX_AGE, 720 * HOUR),
        maxCount: env.GATEWAY_RETENTION_RUN_EVENTS_MAX_COUNT ?? 1_000_000,
      },
      runArtifacts: {
        maxAgeMs: duration(env.GATEWAY_RETENTION_RUN_ARTIFACTS_MAX_AGE, 720 * HOUR),
        maxCount: env.GATEWAY_RETENTION_RUN_ARTIFACTS_MAX_COUNT ?? 100_000,
      },
    },
  };
}
