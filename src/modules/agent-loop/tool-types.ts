import type { AppConfig } from '@core/config/app-config';
import type { NewArtifact, RunWorkspace } from '@modules/tasks';
import type { CommandSandbox } from '@modules/workspaces';

/** docs/design.md §11.6: what a call does to the world, decided before dispatch. */
export type ToolClass = 'read_only' | 'idempotent' | 'side_effecting';

export interface ToolContext {
  workspace: RunWorkspace;
  sandbox: CommandSandbox;
  config: AppConfig;
  signal: AbortSignal;
  timeoutMs: number;
  /** Incremental output of a running command (tool_progress on the run's live stream), when enabled. */
  progress?(stream: 'stdout' | 'stderr', text: string): void;
}

export interface ToolResult {
  /** What the model reads back. */
  text: string;
  isError: boolean;
  artifacts?: NewArtifact[];
  summary?: Record<string, unknown>;
  exitCode?: number | null;
}

export interface BuiltinTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  classification: ToolClass;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
