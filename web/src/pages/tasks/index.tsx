import { useState } from 'react';
import { Page } from '../../components/Page';
import { CreateTaskForm } from './create-task-form';
import { Link, useHecate, useLocation, useParams } from './shell';
import { TaskDetail } from './task-detail';
import { TaskList, type TaskFilters } from './task-list';
import { taskSummary } from './types';
import './tasks.css';

/**
 * The Tasks page: `/tasks` lists the tenant's tasks with filters and creates new ones; `/tasks/:taskId` is one task
 * with its runs live (docs/api.md §4.3–4.5).
 */
export default function TasksPage() {
  const { taskId } = useParams<{ taskId?: string }>();
  const client = useHecate();
  const [, navigate] = useLocation();
  const [filters, setFilters] = useState<TaskFilters>({ status: '', kind: '', search: '' });
  const [creating, setCreating] = useState(false);

  if (taskId) {
    return (
      <>
        <p className="tasks-back">
          <Link href="/tasks">← All tasks</Link>
        </p>
        <TaskDetail key={taskId} client={client} taskId={taskId} onDeleted={() => navigate('/tasks')} />
      </>
    );
  }
  return (
    <Page
      title="Tasks"
      actions={
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          New task
        </button>
      }
    >
      {creating && (
        <div className="panel">
          <CreateTaskForm client={client} onCreated={(id) => navigate(`/tasks/${id}`)} />
        </div>
      )}
      <TaskList client={client} filters={filters} onFilters={setFilters} link={(t) => <Link href={`/tasks/${t.id}`}>{taskSummary(t)}</Link>} />
    </Page>
  );
}
