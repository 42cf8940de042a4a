import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { version as packageVersion } from '../../../package.json';
import { checkPlatformEnv, PlatformConfig, platformConfig, PlatformEnv } from './groups/platform.env';
import { checkGatewayEnv, GatewayConfig, gatewayConfig, GatewayEnv } from './groups/gateway.env';
import { ChatConfig, chatConfig, ChatEnv, checkChatEnv } from './groups/chat.env';
import { checkTasksEnv, TasksConfig, tasksConfig, TasksEnv } from './groups/tasks.env';
import { AgentConfig, agentConfig, AgentEnv, checkAgentEnv } from './groups/agent.env';
import { SandboxLimitsConfig, sandboxLimitsConfig, SandboxLimitsEnv } from './groups/sandbox-limits.env';
import { checkMcpEnv, McpConfig, mcpConfig, McpEnv } from './groups/mcp.env';
import { readSecretFiles } from './secret-files';
import { ConfigWarning, configWarnings, declaredVariables } from './config-warnings';

/** Everything the process is configured with, in typed groups. Built once by `loadConfig`. */
export type AppConfigValues = PlatformConfig & { version: string; startedAt: Date } & { gateway: GatewayConfig } & { chat: ChatConfig } & {
  tasks: TasksConfig;
  agent: AgentConfig;
  /** Resource limits of sandboxed commands. */
  sandboxLimits: SandboxLimitsConfig;
  /** MCP server walls: stdio command allowlist, `$VAR` allowlist, idle limit, message cap. */
  mcp: McpConfig;
  /** Files secrets were read from (`<NAME>_FILE`): never mounted into a task's sandbox. */
  secretFiles: string[];
  /** Reference-system variables not used here and unknown `GATEWAY_*` names: logged once at startup by every role (names only). */
  warnings: ConfigWarning[];
};

export type RawEnv = Record<string, string | undefined>;

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

function flatten(errors: ValidationError[]): string[] {
  return errors.flatMap((e) => Object.values(e.constraints ?? {}).map((msg) => `${e.property}: ${msg}`));
}

/** Validates one group; `schema` records the group, so its declared variables are names the loader knows. */
function validateGroup<E extends object>(schema: (new () => object)[], cls: new () => E, env: RawEnv, problems: string[], check?: (e: E) => string[]): E {
  schema.push(cls);
  // Empty strings mean "unset" for env vars (strip them before @Type conversions turn '' into 0).
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const instance = plainToInstance(cls, present, { excludeExtraneousValues: false, enableImplicitConversion: false });
  problems.push(...flatten(validateSync(instance, { skipMissingProperties: false, forbidUnknownValues: false })));
  if (check) problems.push(...check(instance));
  return instance;
}

/** Reads and validates the environment once. Throws `ConfigValidationError` naming every bad variable. */
export function loadConfig(raw: RawEnv): AppConfigValues {
  const { env, files, problems } = readSecretFiles(raw);
  const schema: (new () => object)[] = [];
  const platform = validateGroup(schema, PlatformEnv, env, problems, checkPlatformEnv);
  const gateway = validateGroup(schema, GatewayEnv, env, problems, checkGatewayEnv);
  const chat = validateGroup(schema, ChatEnv, env, problems, checkChatEnv);
  const tasks = validateGroup(schema, TasksEnv, env, problems, checkTasksEnv);
  const agent = validateGroup(schema, AgentEnv, env, problems, checkAgentEnv);
  const sandboxLimits = validateGroup(schema, SandboxLimitsEnv, env, problems);
  const mcp = validateGroup(schema, McpEnv, env, problems, checkMcpEnv);
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return oneRecoveryClock(
    {
      ...platformConfig(platform),
      version: packageVersion,
      startedAt: new Date(),
      gateway: gatewayConfig(gateway),
      chat: chatConfig(chat),
      tasks: tasksConfig(tasks, env),
      agent: agentConfig(agent),
      sandboxLimits: sandboxLimitsConfig(sandboxLimits),
      mcp: mcpConfig(mcp),
      secretFiles: files,
      warnings: configWarnings(raw, declaredVariables(schema)),
    },
    env,
  );
}

/**
 * The run lease is the one clock of recovery (docs/design.md §11.3): unless set on their own, the queue's job lock (after
 * which BullMQ redelivers a dead worker's job) and the reconciler's period follow GATEWAY_TASK_QUEUE_LEASE_SECONDS, so
 * a dead worker's run is taken over within 2 × lease whatever else is configured.
 */
function oneRecoveryClock(config: AppConfigValues, env: RawEnv): AppConfigValues {
  const leaseMs = config.tasks.leaseSeconds * 1000;
  if (!env.GATEWAY_QUEUE_LOCK_MS) config.queue.lockDurationMs = Math.max(1000, leaseMs);
  if (!env.GATEWAY_TASK_RECONCILE_INTERVAL) config.tasks.reconcileIntervalMs = Math.min(config.tasks.reconcileIntervalMs, leaseMs);
  return config;
}
