import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { bool, csv, duration, IsBooleanString, IsDuration } from '../config-validators';

/** Approval gates of the task runtime (docs/api.md §4 "Approval policy configuration"). */
export const APPROVAL_POLICY_NAMES = ['shell_exec', 'git_exec', 'file_write', 'network_egress', 'read_file', 'all_tools'] as const;
export type ApprovalPolicyName = (typeof APPROVAL_POLICY_NAMES)[number];

/** Active gates of a list of policy names: `all_tools` is every gate (GATEWAY_TASK_APPROVAL_POLICIES, a saved agent's). */
export const expandApprovalPolicies = (named: readonly ApprovalPolicyName[]): ApprovalPolicyName[] =>
  named.includes('all_tools') ? APPROVAL_POLICY_NAMES.filter((p) => p !== 'all_tools') : [...new Set(named)];

/** Task runtime, event feeds and retention variables. */
export class TasksEnv {
  @IsOptional() @IsString() GATEWAY_TASK_APPROVAL_POLICIES?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(3600) GATEWAY_TASK_QUEUE_LEASE_SECONDS?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_MAX_CONCURRENT?: number;
  @IsOptional() @IsDuration() GATEWAY_TASK_RECONCILE_INTERVAL?: string;
  /** How often each worker looks for due schedules, and how late a fire may be before it counts as missed (catch-up). */
  @IsOptional() @IsDuration() GATEWAY_SCHEDULER_INTERVAL?: string;
  @IsOptional() @IsDuration() GATEWAY_SCHEDULER_MISFIRE_GRACE?: string;
  /** Webhooks (docs/webhooks.md): each worker's pass, one attempt's time limit, how long a delivery is retried, and failed deliveries in a row that disable a webhook. */
  @IsOptional() @IsDuration() GATEWAY_WEBHOOK_INTERVAL?: string;
  @IsOptional() @IsDuration() GATEWAY_WEBHOOK_TIMEOUT?: string;
  @IsOptional() @IsDuration() GATEWAY_WEBHOOK_RETRY_WINDOW?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) GATEWAY_WEBHOOK_DISABLE_AFTER?: number;
  /** Loopback and private addresses as webhook URLs (metadata and link-local never). */
  @IsOptional() @IsBooleanString() GATEWAY_WEBHOOK_ALLOW_PRIVATE_IPS?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1024) GATEWAY_TASK_MAX_OUTPUT_BYTES?: number;
  /** What one run may store: one artifact (content and metadata), and all of its artifacts and step results; 0 = none. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_MAX_ARTIFACT_BYTES?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_MAX_RUN_STORED_BYTES?: number;
  @IsOptional() @IsDuration() GATEWAY_TASK_DEFAULT_TIMEOUT?: string;
  @IsOptional() @IsString() GATEWAY_WORKSPACES_DIR?: string;
  @IsOptional() @IsIn(['auto', 'bwrap', 'none']) GATEWAY_TASK_SANDBOX?: string;
  /** The bubblewrap binary (default `bwrap` on PATH). */
  @IsOptional() @IsString() GATEWAY_TASK_SANDBOX_BWRAP?: string;
  /** The unprivileged uid/gid task commands run as when the worker runs as root (default 65534, nobody). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(4294967294) GATEWAY_TASK_SANDBOX_UID?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(4294967294) GATEWAY_TASK_SANDBOX_GID?: number;
  /** Extra host paths mounted read-only into the sandbox (comma-separated absolute paths). */
  @IsOptional() @IsString() GATEWAY_TASK_SANDBOX_READ_PATHS?: string;
  /** Host directories tenant keys may use as `working_directory` (in place or copied); none by default. */
  @IsOptional() @IsString() GATEWAY_WORKSPACE_ROOTS?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1024) GATEWAY_WORKSPACE_COPY_MAX_BYTES?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) GATEWAY_WORKSPACE_COPY_MAX_FILES?: number;
  /** Outbound requests made for tasks (repo clones, agent http tools): private addresses and a host allowlist. */
  @IsOptional() @IsBooleanString() GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS?: string;
  @IsOptional() @IsString() GATEWAY_TASK_HTTP_ALLOWED_HOSTS?: string;
  /** `host:port` pairs a sandboxed command never reaches whatever the allowlists say (the api's address in a scaled deployment). */
  @IsOptional() @IsString() GATEWAY_TASK_SANDBOX_EGRESS_DENY?: string;
  /** Host variables passed through the cleaned environment of task subprocesses. */
  @IsOptional() @IsString() PATH?: string;
  @IsOptional() @IsString() LANG?: string;
  @IsOptional() @IsString() LC_ALL?: string;
  @IsOptional() @IsString() TZ?: string;

  @IsOptional() @IsDuration() GATEWAY_SSE_HEARTBEAT_INTERVAL?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(4096) GATEWAY_SSE_MAX_BUFFER_BYTES?: number;
  /** Open reader streams (GET …/stream) one credential may hold in one api process; 0 = no per-key cap. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_SSE_MAX_STREAMS_PER_KEY?: number;
  /** Open reader streams one api process holds in all; 0 = no cap. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_SSE_MAX_STREAMS?: number;

  @IsOptional() @IsBooleanString() GATEWAY_RETENTION_ENABLED?: string;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_INTERVAL?: string;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_RUN_EVENTS_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_RUN_EVENTS_MAX_COUNT?: number;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_RUN_ARTIFACTS_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_RUN_ARTIFACTS_MAX_COUNT?: number;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_AGENT_CHAT_APPROVALS_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_AGENT_CHAT_APPROVALS_MAX_COUNT?: number;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_RESPONSES_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_RESPONSES_MAX_COUNT?: number;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_WEBHOOK_DELIVERIES_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_WEBHOOK_DELIVERIES_MAX_COUNT?: number;
  @IsOptional() @IsDuration() GATEWAY_RETENTION_SCHEDULE_FIRINGS_MAX_AGE?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_RETENTION_SCHEDULE_FIRINGS_MAX_COUNT?: number;

  /** MCP client (docs/api.md §4): servers per task (0 = no cap) and the worker's cache of connected MCP clients. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_MAX_MCP_SERVERS_PER_TASK?: number;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) GATEWAY_TASK_MCP_CLIENT_CACHE_MAX_ENTRIES?: number;
  @IsOptional() @IsDuration() GATEWAY_TASK_MCP_CLIENT_CACHE_PING_INTERVAL?: string;
  @IsOptional() @IsDuration() GATEWAY_TASK_MCP_CLIENT_CACHE_PING_TIMEOUT?: string;
}

export interface TasksConfig {
  /** Active approval gates; `all_tools` is expanded to every gate. */
  approvalPolicies: ApprovalPolicyName[];
  leaseSeconds: number;
  /** 0 = no cluster-wide cap on running runs. */
  maxConcurrent: number;
  reconcileIntervalMs: number;
  /** Schedules (docs/schedules.md): each worker's polling period, and the lateness beyond which a fire time counts as missed. */
  scheduler: { intervalMs: number; misfireGraceMs: number };
  /** Webhooks (docs/webhooks.md). */
  webhooks: { intervalMs: number; timeoutMs: number; retryWindowMs: number; disableAfter: number; allowPrivate: boolean };
  maxOutputBytes: number;
  /** Storage caps of a run (0 = none): beyond them the run fails with `storage_limit_exceeded`. */
  storage: { maxArtifactBytes: number; maxRunStoredBytes: number };
  defaultTimeoutMs: number;
  workspacesDir: string;
  sandbox: 'auto' | 'bwrap' | 'none';
  sandboxBwrap: string;
  /** Who task commands run as when the worker is root. */
  sandboxIdentity: { uid: number; gid: number };
  sandboxReadPaths: string[];
  /** Where tenant keys may point `working_directory` (operator: anywhere). */
  workspaceRoots: string[];
  workspaceCopy: { maxBytes: number; maxFiles: number };
  outbound: { allowPrivate: boolean; allowedHosts: string[] };
  /** Refused to sandboxed commands besides the server's own ports, its Postgres and Redis (`host:port`, lower case). */
  sandboxEgressDeny: string[];
  /** The allowlisted host environment of task subprocesses (PATH, LANG, LC_ALL, TZ when set). */
  childEnv: Record<string, string>;
  sse: { heartbeatMs: number; maxBufferBytes: number; maxStreamsPerKey: number; maxStreams: number };
  retention: {
    enabled: boolean;
    intervalMs: number;
    runEvents: { maxAgeMs: number; maxCount: number };
    runArtifacts: { maxAgeMs: number; maxCount: number };
    agentChatApprovals: { maxAgeMs: number; maxCount: number };
    responses: { maxAgeMs: number; maxCount: number };
    /** Webhook deliveries that ended (delivered or failed; pending ones are never pruned). */
    webhookDeliveries: { maxAgeMs: number; maxCount: number };
    /** Schedule firings that ended (pending ones are never pruned). */
    scheduleFirings: { maxAgeMs: number; maxCount: number };
  };
  mcp: {
    /** 0 = no cap on `mcp_servers` entries per task. */
    maxServersPerTask: number;
    /** Soft cap of the worker's MCP client cache (idle entries are evicted LRU; fail-open when all are in use). */
    cacheMaxEntries: number;
    /** 0 = no proactive ping of idle cached servers. */
    cachePingIntervalMs: number;
    cachePingTimeoutMs: number;
  };
}

const HOUR = 3_600_000;

export function checkTasksEnv(env: TasksEnv): string[] {
  const problems: string[] = [];
  const badDeny = csv(env.GATEWAY_TASK_SANDBOX_EGRESS_DENY, []).filter((e) => !/^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/.test(e));
  if (badDeny.length > 0) problems.push(`GATEWAY_TASK_SANDBOX_EGRESS_DENY: entries must be host:port ([v6]:port for IPv6): ${badDeny.join(', ')}`);
  for (const name of ['GATEWAY_TASK_SANDBOX_READ_PATHS', 'GATEWAY_WORKSPACE_ROOTS'] as const) {
    const relative = csv(env[name], []).filter((p) => !isAbsolute(p));
    if (relative.length > 0) problems.push(`${name}: paths must be absolute (${relative.join(', ')})`);
  }
  return [...problems, ...approvalPolicyProblems(env)];
}

function approvalPolicyProblems(env: TasksEnv): string[] {
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

/**
 * `raw` is the environment before empty variables were stripped: the API contract's one exception to "empty means unset" is
 * GATEWAY_TASK_APPROVAL_POLICIES, whose empty value disables every gate (`none` says the same).
 */
export function tasksConfig(env: TasksEnv, raw: Record<string, string | undefined> = {}): TasksConfig {
  const policies = raw.GATEWAY_TASK_APPROVAL_POLICIES?.trim() === '' ? 'none' : env.GATEWAY_TASK_APPROVAL_POLICIES;
  const named = csv(policies, ['shell_exec', 'git_exec', 'file_write']).filter((p) => p !== 'none') as ApprovalPolicyName[];
  const approvalPolicies = expandApprovalPolicies(named);
  return {
    approvalPolicies,
    leaseSeconds: env.GATEWAY_TASK_QUEUE_LEASE_SECONDS ?? 30,
    maxConcurrent: env.GATEWAY_TASK_MAX_CONCURRENT ?? 0,
    reconcileIntervalMs: duration(env.GATEWAY_TASK_RECONCILE_INTERVAL, 30_000),
    scheduler: { intervalMs: duration(env.GATEWAY_SCHEDULER_INTERVAL, 5_000), misfireGraceMs: duration(env.GATEWAY_SCHEDULER_MISFIRE_GRACE, 60_000) },
    webhooks: {
      intervalMs: duration(env.GATEWAY_WEBHOOK_INTERVAL, 1_000),
      timeoutMs: duration(env.GATEWAY_WEBHOOK_TIMEOUT, 5_000),
      retryWindowMs: duration(env.GATEWAY_WEBHOOK_RETRY_WINDOW, 24 * HOUR),
      disableAfter: env.GATEWAY_WEBHOOK_DISABLE_AFTER ?? 5,
      allowPrivate: bool(env.GATEWAY_WEBHOOK_ALLOW_PRIVATE_IPS, false),
    },
    maxOutputBytes: env.GATEWAY_TASK_MAX_OUTPUT_BYTES ?? 4 * 1024 * 1024,
    storage: {
      maxArtifactBytes: env.GATEWAY_TASK_MAX_ARTIFACT_BYTES ?? 32 * 1024 * 1024,
      maxRunStoredBytes: env.GATEWAY_TASK_MAX_RUN_STORED_BYTES ?? 256 * 1024 * 1024,
    },
    defaultTimeoutMs: duration(env.GATEWAY_TASK_DEFAULT_TIMEOUT, 10 * 60_000),
    workspacesDir: env.GATEWAY_WORKSPACES_DIR ?? join(tmpdir(), 'hecate-workspaces'),
    sandbox: (env.GATEWAY_TASK_SANDBOX ?? 'auto') as TasksConfig['sandbox'],
    sandboxBwrap: env.GATEWAY_TASK_SANDBOX_BWRAP ?? 'bwrap',
    sandboxIdentity: { uid: env.GATEWAY_TASK_SANDBOX_UID ?? 65534, gid: env.GATEWAY_TASK_SANDBOX_GID ?? 65534 },
    sandboxReadPaths: csv(env.GATEWAY_TASK_SANDBOX_READ_PATHS, []),
    workspaceRoots: csv(env.GATEWAY_WORKSPACE_ROOTS, []).map((p) => resolve(p)),
    workspaceCopy: { maxBytes: env.GATEWAY_WORKSPACE_COPY_MAX_BYTES ?? 1024 ** 3, maxFiles: env.GATEWAY_WORKSPACE_COPY_MAX_FILES ?? 100_000 },
    outbound: {
      allowPrivate: bool(env.GATEWAY_TASK_HTTP_ALLOW_PRIVATE_IPS, false),
      allowedHosts: csv(env.GATEWAY_TASK_HTTP_ALLOWED_HOSTS, []).map((h) => h.toLowerCase()),
    },
    sandboxEgressDeny: csv(env.GATEWAY_TASK_SANDBOX_EGRESS_DENY, []).map((h) => h.toLowerCase()),
    childEnv: childEnv({ PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: env.LANG, LC_ALL: env.LC_ALL, TZ: env.TZ }),
    sse: {
      heartbeatMs: duration(env.GATEWAY_SSE_HEARTBEAT_INTERVAL, 15_000),
      maxBufferBytes: env.GATEWAY_SSE_MAX_BUFFER_BYTES ?? 1024 * 1024,
      maxStreamsPerKey: env.GATEWAY_SSE_MAX_STREAMS_PER_KEY ?? 32,
      maxStreams: env.GATEWAY_SSE_MAX_STREAMS ?? 256,
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
      /** Resolved external-agent approvals (pending ones and grants are never pruned by age). */
      agentChatApprovals: {
        maxAgeMs: duration(env.GATEWAY_RETENTION_AGENT_CHAT_APPROVALS_MAX_AGE, 720 * HOUR),
        maxCount: env.GATEWAY_RETENTION_AGENT_CHAT_APPROVALS_MAX_COUNT ?? 10_000,
      },
      /** Stored `/v1/responses` responses (what `previous_response_id` can continue). */
      responses: {
        maxAgeMs: duration(env.GATEWAY_RETENTION_RESPONSES_MAX_AGE, 720 * HOUR),
        maxCount: env.GATEWAY_RETENTION_RESPONSES_MAX_COUNT ?? 100_000,
      },
      webhookDeliveries: {
        maxAgeMs: duration(env.GATEWAY_RETENTION_WEBHOOK_DELIVERIES_MAX_AGE, 720 * HOUR),
        maxCount: env.GATEWAY_RETENTION_WEBHOOK_DELIVERIES_MAX_COUNT ?? 100_000,
      },
      scheduleFirings: {
        maxAgeMs: duration(env.GATEWAY_RETENTION_SCHEDULE_FIRINGS_MAX_AGE, 720 * HOUR),
        maxCount: env.GATEWAY_RETENTION_SCHEDULE_FIRINGS_MAX_COUNT ?? 100_000,
      },
    },
    mcp: {
      maxServersPerTask: env.GATEWAY_TASK_MAX_MCP_SERVERS_PER_TASK ?? 16,
      cacheMaxEntries: env.GATEWAY_TASK_MCP_CLIENT_CACHE_MAX_ENTRIES ?? 256,
      cachePingIntervalMs: duration(env.GATEWAY_TASK_MCP_CLIENT_CACHE_PING_INTERVAL, 60_000),
      cachePingTimeoutMs: duration(env.GATEWAY_TASK_MCP_CLIENT_CACHE_PING_TIMEOUT, 5_000),
    },
  };
}
