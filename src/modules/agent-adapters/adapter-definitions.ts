/**
 * The external-agent adapters Hecate knows how to supervise (docs/api.md §4 `/hecate/v1/agent-adapters`): the built-in
 * ones and those the operator defines in GATEWAY_AGENT_ADAPTERS. Pure data and checks; discovery (what is installed
 * here, its version and auth hint) runs on a worker (adapter-discovery.ts).
 */
import { coerce, satisfies as semverSatisfies, validRange } from 'semver';

/** How an installed npm package starts the adapter: a platform binary in another package, or a Node script. */
export interface InstalledLaunch {
  /** The package whose file is run (codex-acp's platform package, claude-agent-acp itself). */
  package: string;
  /** The file inside it. */
  file: string;
  /** `node`: run the file with the worker's Node; `binary`: run it directly. */
  runner: 'node' | 'binary';
}

export interface AdapterDefinition {
  id: string;
  name: string;
  kind: 'acp';
  command: string;
  args: string[];
  managed: boolean;
  managedPackage?: string;
  /** How the managed package runs once installed (in the server's node_modules or the adapters dir). */
  installed?: InstalledLaunch;
  supportedRange: string;
  costMode: 'external';
  /** Worker environment variables passed to the adapter (its vendor's credentials and settings); nothing else is. */
  envAllowlist: string[];
  /**
   * Auth hint without spawning: any of these env vars, or any of these files under the adapter's home. `opaque`: the
   * adapter may also be logged in where that cannot be seen (a keychain), so absence means `unknown`, not `unauthenticated`.
   */
  auth: { env: string[]; files: string[]; hint: string; opaque?: boolean };
  builtIn: boolean;
  /**
   * The adapter can be pointed at a model endpoint: a session with a `model` then runs it against this gateway (its
   * Anthropic- or OpenAI-compatible ingress) with a per-session key, metered here (`cost_mode: gateway`).
   */
  gateway?: GatewayWiring;
  /** `session/set_mode` right after a session opens (Claude Code starts in `auto`, where it asks nobody). */
  initialMode?: string;
}

/** The environment (and, for adapters configured by flags, the arguments) that point an adapter at this gateway. */
export interface GatewayWiring {
  /** The variable that takes the gateway's URL (none: `args` carry it). */
  baseUrlEnv?: string;
  keyEnv: string;
  /** Every model variable the adapter reads (its main and its small/fast models): all get the session's model. */
  modelEnvs: string[];
  /** Credentials that would take precedence over the key: removed. */
  clearEnvs: string[];
  /** Arguments appended to the adapter's command: the gateway's URL and the session's model as the adapter's settings. */
  args?: (gatewayUrl: string, model: string) => string[];
}

/** Codex reads its model endpoint from `-c` settings only (OPENAI_BASE_URL is ignored): a `responses` provider here. */
const codexProviderArgs = (gatewayUrl: string, model: string): string[] => [
  '-c',
  'model_provider="hecate"',
  '-c',
  `model_providers.hecate={name="Hecate",base_url=${JSON.stringify(`${gatewayUrl}/v1`)},env_key="HECATE_GATEWAY_KEY",wire_api="responses"}`,
  '-c',
  `model=${JSON.stringify(model)}`,
];

const platformPackage = (base: string): string => `${base}-${process.platform}-${process.arch}`;

export const BUILT_IN_ADAPTERS: readonly AdapterDefinition[] = [
  {
    id: 'codex',
    name: 'Codex',
    kind: 'acp',
    command: 'codex-acp',
    args: [],
    managed: true,
    managedPackage: '@zed-industries/codex-acp',
    // The package's bin is a Node wrapper that does not forward signals: run the platform binary itself.
    installed: { package: platformPackage('@zed-industries/codex-acp'), file: 'bin/codex-acp', runner: 'binary' },
    supportedRange: '>=0.9.0 <1.0.0',
    costMode: 'external',
    envAllowlist: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID'],
    gateway: { keyEnv: 'HECATE_GATEWAY_KEY', modelEnvs: [], clearEnvs: ['OPENAI_API_KEY', 'CODEX_API_KEY'], args: codexProviderArgs },
    auth: {
      env: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
      files: ['.codex/auth.json'],
      hint: 'Run codex login, or set OPENAI_API_KEY for the adapter environment.',
    },
    builtIn: true,
  },
  {
    id: 'claude_code',
    name: 'Claude Code',
    kind: 'acp',
    command: 'claude-agent-acp',
    args: [],
    managed: true,
    managedPackage: '@agentclientprotocol/claude-agent-acp',
    installed: { package: '@agentclientprotocol/claude-agent-acp', file: 'dist/index.js', runner: 'node' },
    supportedRange: '>=0.20.0 <1.0.0',
    costMode: 'external',
    envAllowlist: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL', 'CLAUDE_CODE_OAUTH_TOKEN'],
    gateway: {
      baseUrlEnv: 'ANTHROPIC_BASE_URL',
      keyEnv: 'ANTHROPIC_API_KEY',
      modelEnvs: [
        'ANTHROPIC_MODEL',
        'ANTHROPIC_SMALL_FAST_MODEL',
        'ANTHROPIC_DEFAULT_HAIKU_MODEL',
        'ANTHROPIC_DEFAULT_SONNET_MODEL',
        'ANTHROPIC_DEFAULT_OPUS_MODEL',
      ],
      clearEnvs: ['CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN'],
    },
    initialMode: 'default',
    auth: {
      env: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'],
      files: ['.claude/.credentials.json'],
      hint: 'Run claude /status or claude login if the ACP probe reports auth or billing errors.',
      opaque: true,
    },
    builtIn: true,
  },
  {
    id: 'cursor_agent',
    name: 'Cursor Agent',
    kind: 'acp',
    command: 'cursor-agent',
    args: ['acp'],
    managed: false,
    supportedRange: '>=0.1.0',
    costMode: 'external',
    envAllowlist: ['CURSOR_API_KEY'],
    auth: { env: ['CURSOR_API_KEY'], files: ['.cursor/cli-config.json'], hint: 'Run cursor-agent login, or set CURSOR_API_KEY for the adapter environment.' },
    builtIn: true,
  },
];

const ID = /^[a-z][a-z0-9_-]{0,63}$/;

/**
 * GATEWAY_AGENT_ADAPTERS: a JSON array of `{id, name?, command, args?, env?, supported_range?, auth_env?}` (operator-
 * defined ACP adapters). Throws with every problem at once: a bad entry stops the server at boot, never at first use.
 */
export function parseOperatorAdapters(raw: string): AdapterDefinition[] {
  if (!raw.trim()) return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new Error(`GATEWAY_AGENT_ADAPTERS is not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!Array.isArray(value)) throw new Error('GATEWAY_AGENT_ADAPTERS must be a JSON array of adapter entries');
  const problems: string[] = [];
  const out: AdapterDefinition[] = [];
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
  value.forEach((entry: Record<string, unknown>, i) => {
    const at = `GATEWAY_AGENT_ADAPTERS[${i}]`;
    if (!entry || typeof entry !== 'object') return problems.push(`${at} is not an object`);
    const id = entry.id;
    if (typeof id !== 'string' || !ID.test(id)) problems.push(`${at}.id must match ${ID.source}`);
    else if (BUILT_IN_ADAPTERS.some((b) => b.id === id) || out.some((o) => o.id === id)) problems.push(`${at}.id "${id}" is already defined`);
    if (typeof entry.command !== 'string' || !entry.command) problems.push(`${at}.command is required`);
    if (entry.args !== undefined && !strings(entry.args)) problems.push(`${at}.args must be an array of strings`);
    if (entry.env !== undefined && !strings(entry.env)) problems.push(`${at}.env must be an array of variable names (an allowlist)`);
    if (entry.auth_env !== undefined && !strings(entry.auth_env)) problems.push(`${at}.auth_env must be an array of variable names`);
    if (entry.supported_range !== undefined && (typeof entry.supported_range !== 'string' || !isRange(entry.supported_range)))
      problems.push(`${at}.supported_range is not a version range (e.g. ">=1.2.0 <2.0.0")`);
    if (problems.length) return;
    out.push({
      id: id as string,
      name: typeof entry.name === 'string' && entry.name ? entry.name : (id as string),
      kind: 'acp',
      command: entry.command as string,
      args: (entry.args as string[] | undefined) ?? [],
      managed: false,
      supportedRange: (entry.supported_range as string | undefined) ?? '',
      costMode: 'external',
      envAllowlist: (entry.env as string[] | undefined) ?? [],
      auth: { env: (entry.auth_env as string[] | undefined) ?? [], files: [], hint: `Check ${id}'s credentials in the adapter environment.` },
      builtIn: false,
    });
  });
  if (problems.length) throw new Error(problems.join('; '));
  return out;
}

/** The first semver-shaped token of `text` ("codex-acp 0.16.0 (abc)" → "0.16.0"). */
export function firstVersion(text: string): string | undefined {
  return /(?<![\d.])(\d+\.\d+\.\d+)/.exec(text)?.[1];
}

/** An npm version range (`>=1.2.0 <2.0.0`, `^1.2.0`, `~1.2`, `1.x || 2.x`, …); a blank one is none. */
const isRange = (range: string): boolean => range.trim() !== '' && validRange(range) !== null;

/**
 * Whether `version` satisfies `range` (npm's semver rules; a prerelease tag or missing minor/patch of the version is
 * ignored: "2.3.4-beta.1" counts as 2.3.4, "2" as 2.0.0); undefined when either is missing or unreadable.
 */
export function satisfies(version: string | undefined, range: string): boolean | undefined {
  const v = version ? coerce(version) : null;
  if (!v || !isRange(range)) return undefined;
  return semverSatisfies(v, range);
}
