/** The token a worker-only provider injects the command sandbox by (`@Inject(COMMAND_SANDBOX) sandbox: CommandSandbox`). */
export const COMMAND_SANDBOX = Symbol('COMMAND_SANDBOX');

/** What a command run for a task may touch (docs/security.md). */
export interface SandboxPolicy {
  workspace: string;
  cwd: string;
  readOnly: boolean;
  network: boolean;
  /** Extra host paths the command may read (a local clone source). */
  readPaths?: string[];
  /** Extra host directories the command may write besides its workspace (an external agent's own home). */
  writePaths?: string[];
  /** Never uid 0: a root-owned workspace runs the command as the sandbox uid (external agent adapters). */
  unprivileged?: boolean;
}

/**
 * The worker's command sandbox (SandboxService). Only the worker builds one (WorkspacesWorkerModule); a worker-only
 * provider injects it with `@Inject(COMMAND_SANDBOX)`.
 */
export interface CommandSandbox {
  /** The isolation commands get: bubblewrap, none (GATEWAY_TASK_SANDBOX=none), or unavailable (they are refused). */
  readonly layer: 'bwrap' | 'none' | 'unavailable';
  /** Why commands cannot run on this worker (null when they can). */
  refusal(): string | null;
  /** The argv that runs `argv` under the policy; throws when commands are refused. */
  wrap(argv: string[], policy: SandboxPolicy): string[];
  /** Who commands in `workspace` run as (null: the worker's own user). */
  identityFor(workspace: string, unprivileged?: boolean): { uid: number; gid: number } | null;
  /** uid/gid that files the server creates for a managed workspace must belong to (null: leave as is). */
  workspaceIdentity(): { uid: number; gid: number } | null;
  /** A new empty throwaway workspace (`<workspaces>/.<purpose>/…`) owned by whoever commands in it run as; the caller removes it. */
  scratchWorkspace(purpose: string): Promise<string>;
}
