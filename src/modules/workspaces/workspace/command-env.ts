import type { TasksConfig } from '@core/config/groups/tasks.env';

/** The cleaned environment: allowlisted host variables, HOME = workspace, TERM=dumb. */
export function commandEnv(config: TasksConfig, workspace: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...config.childEnv, HOME: workspace, TERM: 'dumb', ...extra };
}
