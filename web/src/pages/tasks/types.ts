import type { Schemas } from '@hecate/sdk';
import type { Tone } from '../../components/StatusBadge';

/** The task runtime's shapes as the SDK types them (generated from the server's OpenAPI document). */
export type Task = Schemas['Task'];
export type TaskRun = Schemas['TaskRun'];
export type TaskStep = Schemas['TaskStep'];
export type TaskArtifact = Schemas['TaskArtifact'];
export type TaskApproval = Schemas['TaskApproval'];
export type TaskPatch = Schemas['TaskPatch'];
export type Activity = Schemas['TaskRunActivity'];
export type RunFrame = Schemas['TaskRunStreamEvent'];
export type SavedAgent = Schemas['Agent'];

/** docs/api.md §4.3: the execution kinds a task may have, with the label the console shows. */
export const EXECUTION_KINDS = [
  { value: 'shell', label: 'Shell command' },
  { value: 'git', label: 'Git command' },
  { value: 'file', label: 'File change' },
  { value: 'agent_loop', label: 'Agent loop' },
] as const;
export type ExecutionKind = (typeof EXECUTION_KINDS)[number]['value'];

export const TASK_STATUSES = ['not_started', 'queued', 'awaiting_approval', 'running', 'completed', 'failed', 'cancelled'] as const;

const ACTIVE = new Set(['queued', 'awaiting_approval', 'running']);
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export const isActiveStatus = (status: string): boolean => ACTIVE.has(status);
export const isTerminalStatus = (status: string): boolean => TERMINAL.has(status);

export const kindLabel = (kind: string): string => EXECUTION_KINDS.find((k) => k.value === kind)?.label ?? kind;
export const statusLabel = (status: string): string => status.replace(/_/g, ' ');

/** What a task is, in a line: its title, else what it runs. */
export function taskSummary(t: Task): string {
  const what = t.title || t.shell_command || t.git_command || (t.file_path ? `${t.file_operation ?? 'write'} ${t.file_path}` : '') || t.prompt;
  return what ? firstLine(what, 120) : t.id;
}

export function firstLine(text: string, max: number): string {
  const line = text.split('\n', 1)[0];
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The shared badge tone of a task, run, approval or patch status (the word is shown too, never colour alone). */
export function statusTone(status: string): Tone {
  if (['completed', 'applied', 'approved', 'ready', 'reverted'].includes(status)) return 'ok';
  if (['failed', 'rejected', 'denied'].includes(status)) return 'error';
  if (['awaiting_approval', 'pending', 'proposed'].includes(status)) return 'warn';
  return 'idle';
}

/** Milliseconds between two instants (the second defaults to now, for a run still going). */
export const elapsedMs = (from: string | undefined, to: string | undefined): number | undefined =>
  from ? (to ? Date.parse(to) : Date.now()) - Date.parse(from) : undefined;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
