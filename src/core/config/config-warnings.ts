import { getMetadataStorage } from 'class-validator';
import { MCP_SECRET_PREFIX } from './groups/mcp.env';
import { isSecretName } from './secret-files';

/** Something in the environment the server does not read as written. Names only: values may be secrets. */
export interface ConfigWarning {
  variable: string;
  /** Log message (names only). */
  message: string;
  /** Reference-system variables with no meaning here: what takes their place. */
  replaced_by?: string;
  /** Unknown variables: the nearest name the loader knows, when one is close. */
  did_you_mean?: string;
}

/**
 * Variables of the reference system (its runtime backend and queue configuration, Agent Chat, tool_progress) that select a
 * backend or size a buffer this server does not have, or that it reads under another name, with what replaces each. Reference-system variables that have a meaning here are read by
 * their group instead (`HECATE_AGENT_ADAPTERS_DIR`: agent.env.ts).
 */
export const SEED_VARIABLES_NOT_USED: Readonly<Record<string, string>> = {
  GATEWAY_TASKS_BACKEND:
    'tasks, runs, approvals, artifacts and run events are always stored in the database: PGlite in GATEWAY_DATA_DIR (embedded mode) or Postgres at DATABASE_URL (scaled mode)',
  GATEWAY_CHAT_SESSIONS_BACKEND:
    'chat sessions and Agent Chat state (sessions, messages, approvals, grants) are always stored in the database: PGlite in GATEWAY_DATA_DIR (embedded mode) or Postgres at DATABASE_URL (scaled mode)',
  GATEWAY_TASK_QUEUE_BACKEND:
    'the queue follows the mode: in-process in embedded mode, BullMQ on REDIS_URL in scaled mode (DATABASE_URL and REDIS_URL set); runs are leased in the database either way (GATEWAY_TASK_QUEUE_LEASE_SECONDS)',
  GATEWAY_TASK_QUEUE_BUFFER:
    'queued runs wait as database rows, not in an in-memory buffer: GATEWAY_TASK_QUEUE_WORKERS sets the jobs a worker runs at once, GATEWAY_TASK_MAX_CONCURRENT caps running runs',
  // docs/api.md §5 names the tool_progress switch after its own product.
  SAGE_TOOL_PROGRESS_ENABLED: 'GATEWAY_TOOL_PROGRESS_ENABLED (the same switch: false keeps tool_progress frames off the live streams)',
};

/** Prefixes whose unknown names are reported. `HECATE_*` also names other tools' variables (the ACP agent, the MCP relay). */
const CHECKED_PREFIXES = ['GATEWAY_', 'HECATE_'] as const;

/** The variable names a validated env class declares (its class-validator metadata: every property is decorated). */
export function declaredVariables(schema: readonly (new () => object)[]): string[] {
  const storage = getMetadataStorage();
  const names = schema.flatMap((cls) => storage.getTargetValidationMetadatas(cls, '', true, false).map((m) => m.propertyName));
  return [...new Set(names)];
}

/**
 * Warnings about the environment, read once at startup: a reference-system variable this server does not use (with what replaces
 * it) and an unknown `GATEWAY_*` variable (with the nearest known name when one is close). An unknown `HECATE_*`
 * variable is reported only when it is close to a known name, since other tools of this project (`npm run acp`,
 * `npm run mcp`) and the operator's `HECATE_MCP_SECRET_*` secrets share that prefix.
 */
export function configWarnings(raw: Record<string, string | undefined>, known: readonly string[]): ConfigWarning[] {
  const knownSet = new Set(known);
  const warnings: ConfigWarning[] = [];
  for (const variable of Object.keys(raw).sort()) {
    if (!raw[variable]) continue; // empty means unset, as everywhere in the loader
    const replacedBy = Object.hasOwn(SEED_VARIABLES_NOT_USED, variable) ? SEED_VARIABLES_NOT_USED[variable] : undefined;
    if (replacedBy) {
      warnings.push({ variable, message: `${variable} (a seed variable) is not used here: ${replacedBy}`, replaced_by: replacedBy });
      continue;
    }
    const prefix = CHECKED_PREFIXES.find((p) => variable.startsWith(p));
    if (!prefix || knownSet.has(variable) || isSecretFileName(variable) || variable.startsWith(MCP_SECRET_PREFIX)) continue;
    const near = nearestName(variable, known);
    if (near) warnings.push({ variable, message: `unknown configuration variable ${variable}: did you mean ${near}?`, did_you_mean: near });
    else if (prefix === 'GATEWAY_')
      warnings.push({ variable, message: `unknown configuration variable ${variable}: not read by this server (see README, Configuration)` });
  }
  return warnings;
}

const isSecretFileName = (name: string): boolean => name.endsWith('_FILE') && isSecretName(name.slice(0, -'_FILE'.length));

const restOf = (name: string): string => {
  const prefix = CHECKED_PREFIXES.find((p) => name.startsWith(p));
  return prefix ? name.slice(prefix.length) : name;
};

/**
 * The known name nearest to `name` by edit distance (adjacent swaps count as one edit), comparing whole names and the
 * parts after the prefix (so `HECATE_TASK_MAX_CONCURRENT` finds `GATEWAY_TASK_MAX_CONCURRENT`); none when the nearest
 * is more than about a quarter of the name away.
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const rest = restOf(name);
  let best: { name: string; distance: number; whole: number } | undefined;
  for (const candidate of known) {
    const whole = editDistance(name, candidate);
    const distance = Math.min(whole, editDistance(rest, restOf(candidate)));
    // Ties go to the name with the same prefix (the smaller whole-name distance), then alphabetically.
    if (!best || distance < best.distance || (distance === best.distance && (whole < best.whole || (whole === best.whole && candidate < best.name)))) {
      best = { name: candidate, distance, whole };
    }
  }
  return best && best.distance <= Math.max(1, Math.floor(rest.length / 4)) ? best.name : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** Logs each warning once, as structured fields (names only). Every role calls it right after its logger exists. */
export function logConfigWarnings(log: { warn(fields: object, message: string): void }, warnings: readonly ConfigWarning[]): void {
  for (const { message, ...fields } of warnings) log.warn({ config_warning: true, ...fields }, message);
}
