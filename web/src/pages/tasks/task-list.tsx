import { useEffect, useId, useState, type ReactNode } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { DataTable, type Column } from '../../components/DataTable';
import { formatTime } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { SelectField } from '../../components/SelectField';
import { useResource } from '../../components/useResource';
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

const columns = (link: Props['link']): Array<Column<Task>> => [
  { header: 'Task', rowHeader: true, cell: link },
  { header: 'Kind', cell: (t) => kindLabel(t.execution_kind) },
  { header: 'Status', cell: (t) => <Status status={t.status} /> },
  { header: 'Created', cell: (t) => formatTime(t.created_at) },
];

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

  return (
    <>
      <FilterBar filters={filters} onFilters={onFilters} onRefresh={tasks.reload} />
      <Loaded resource={tasks} what="tasks" title="The tasks did not load">
        {(list) => {
          const shown = list.filter((t) => matches(t, filters));
          return (
            <>
              <p role="status" className="hint">
                {shown.length} {shown.length === 1 ? 'task' : 'tasks'}
              </p>
              <DataTable caption="Tasks, newest first" columns={columns(link)} rows={shown} rowKey={(t) => t.id} empty={null} />
            </>
          );
        }}
      </Loaded>
    </>
  );
}

function FilterBar({ filters, onFilters, onRefresh }: { filters: TaskFilters; onFilters(f: TaskFilters): void; onRefresh(): void }) {
  const searchId = useId();
  return (
    <form className="tasks-filters" role="search" aria-label="Filter tasks" onSubmit={(e) => e.preventDefault()}>
      <SelectField
        label="Status"
        value={filters.status}
        onChange={(status) => onFilters({ ...filters, status })}
        options={TASK_STATUSES.map((value) => ({ value, label: statusLabel(value) }))}
        empty="Any"
      />
      <SelectField label="Kind" value={filters.kind} onChange={(kind) => onFilters({ ...filters, kind })} options={EXECUTION_KINDS} empty="Any" />
      <div>
        <label htmlFor={searchId}>Search</label>
        <input
          id={searchId}
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
