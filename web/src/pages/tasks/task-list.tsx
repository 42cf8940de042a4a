import { useEffect, useId, useState, type ReactNode } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { formatTime } from '../../components/format';
import { Loading } from '../../components/Loading';
import { useResource } from '../../components/useResource';
import { TaskError } from './error-notice';
import { Status } from './status';
import { EXECUTION_KINDS, TASK_STATUSES, isActiveStatus, kindLabel, statusLabel, type Task } from './types';

export interface TaskFilters {
  status: string;
  kind: string;
  search: string;
}

/** How often the list refreshes while a task on it is queued, running or waiting for approval. */
const ACTIVE_REFRESH_MS = 3000;

/** Whether a task matches the search text (status and kind are filtered by the server). */
export function matches(t: Task, f: TaskFilters): boolean {
  const q = f.search.trim().toLowerCase();
  if (!q) return true;
  return [t.id, t.title, t.prompt, t.shell_command, t.git_command, t.file_path, t.requested_model].some((v) => v?.toLowerCase().includes(q));
}

interface Props {
  client: HecateClient;
  filters: TaskFilters;
  onFilters(f: TaskFilters): void;
  /** The link to a task's page. */
  link(t: Task): ReactNode;
}

/**
 * The tenant's tasks, newest first, filtered by status and kind (on the server) and by text. Refreshes itself while
 * a task shown is still going, so a run finishing elsewhere shows up without a reload.
 */
export function TaskList({ client, filters, onFilters, link }: Props) {
  const load = async (signal: AbortSignal) => {
    const query = { limit: 200, status: filters.status || undefined, execution_kind: filters.kind || undefined };
    return (await client.get('/hecate/v1/tasks', { query, signal })).data;
  };
  const [refreshMs, setRefreshMs] = useState<number>();
  const tasks = useResource(load, [client, filters.status, filters.kind], { refreshMs });
  const anyActive = (tasks.data ?? []).some((t) => isActiveStatus(t.status));
  useEffect(() => setRefreshMs(anyActive ? ACTIVE_REFRESH_MS : undefined), [anyActive]);
  const shown = (tasks.data ?? []).filter((t) => matches(t, filters));
  const captionId = useId();

  return (
    <>
      <FilterBar filters={filters} onFilters={onFilters} onRefresh={tasks.reload} />
      <TaskError error={tasks.error} title="The tasks did not load" />
      {tasks.loading && !tasks.data ? (
        <Loading what="tasks" />
      ) : (
        <p role="status" className="hint">
          {shown.length} {shown.length === 1 ? 'task' : 'tasks'}
        </p>
      )}
      {shown.length > 0 && (
        <table>
          <caption id={captionId} className="visually-hidden">
            Tasks, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((t) => (
              <tr key={t.id}>
                <th scope="row">{link(t)}</th>
                <td>{kindLabel(t.execution_kind)}</td>
                <td>
                  <Status status={t.status} />
                </td>
                <td>{formatTime(t.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function FilterBar({ filters, onFilters, onRefresh }: { filters: TaskFilters; onFilters(f: TaskFilters): void; onRefresh(): void }) {
  const ids = { status: useId(), kind: useId(), search: useId() };
  return (
    <form className="tasks-filters" role="search" aria-label="Filter tasks" onSubmit={(e) => e.preventDefault()}>
      <div>
        <label htmlFor={ids.status}>Status</label>
        <select id={ids.status} value={filters.status} onChange={(e) => onFilters({ ...filters, status: e.target.value })}>
          <option value="">Any</option>
          {TASK_STATUSES.map((s) => (
            <option key={s} value={s}>
              {statusLabel(s)}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={ids.kind}>Kind</label>
        <select id={ids.kind} value={filters.kind} onChange={(e) => onFilters({ ...filters, kind: e.target.value })}>
          <option value="">Any</option>
          {EXECUTION_KINDS.map((k) => (
            <option key={k.value} value={k.value}>
              {k.label}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={ids.search}>Search</label>
        <input
          id={ids.search}
          type="search"
          value={filters.search}
          onChange={(e) => onFilters({ ...filters, search: e.target.value })}
          placeholder="title, command, prompt, id"
        />
      </div>
      <button type="button" className="secondary" onClick={onRefresh}>
        Refresh
      </button>
    </form>
  );
}
