import { useCallback, useId, useState } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { formatMicrosUsd, formatTime } from '../../components/format';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loaded } from '../../components/Loaded';
import { Page } from '../../components/Page';
import { useAction } from '../../components/useAction';
import { useResource } from '../../components/useResource';
import { RunView } from './run-view';
import { Status } from './status';
import { kindLabel, statusLabel, taskSummary, type Task, type TaskRun } from './types';

/**
 * A task and its runs: what it is, which run is shown (the latest unless another is picked), and that run live. A
 * task never started offers Start; a run that made another (retry, resume, continue) switches to the new one.
 */
export function TaskDetail({ client, taskId, onDeleted }: { client: HecateClient; taskId: string; onDeleted(): void }) {
  const task = useResource(async (signal) => (await client.get('/hecate/v1/tasks/{task_id}', { path: { task_id: taskId }, signal })).data, [client, taskId]);
  return (
    <Loaded resource={task} what="the task" title="The task did not load">
      {(t) => <TaskView client={client} task={t} reloadTask={task.reload} onDeleted={onDeleted} />}
    </Loaded>
  );
}

function TaskView({ client, task: t, reloadTask, onDeleted }: { client: HecateClient; task: Task; reloadTask(): void; onDeleted(): void }) {
  const runs = useResource(async (signal) => (await client.get('/hecate/v1/tasks/{task_id}/runs', { path: { task_id: t.id }, signal })).data, [client, t.id]);
  const [picked, setPicked] = useState<string>();
  const action = useAction();

  const { reload: reloadRuns } = runs;
  const refresh = useCallback(() => {
    reloadTask();
    reloadRuns();
  }, [reloadTask, reloadRuns]);
  const showRun = useCallback(
    (run: TaskRun) => {
      setPicked(run.id);
      refresh();
    },
    [refresh],
  );

  const list = [...(runs.data ?? [])].sort((a, b) => b.number - a.number);
  const runId = picked ?? t.latest_run_id ?? list[0]?.id;
  const run = list.find((r) => r.id === runId);
  const start = () => action.run(async () => showRun((await client.post('/hecate/v1/tasks/{task_id}/start', { path: { task_id: t.id } })).data));
  const remove = () =>
    window.confirm('Delete this task, its runs and artifacts?') &&
    void action.run(async () => {
      await client.delete('/hecate/v1/tasks/{task_id}', { path: { task_id: t.id } });
      onDeleted();
    });

  return (
    <Page
      title={taskSummary(t)}
      actions={
        <>
          {!t.latest_run_id && (
            <button type="button" disabled={action.busy} onClick={() => void start()}>
              Start
            </button>
          )}
          <button type="button" className="danger" disabled={action.busy} onClick={remove}>
            Delete task
          </button>
        </>
      }
    >
      <p>
        {kindLabel(t.execution_kind)} · <Status status={t.status} /> · created {formatTime(t.created_at)}
      </p>
      <TaskFacts task={t} />
      <ErrorNotice error={action.error ?? runs.error} title="That did not work" />
      {list.length > 1 && runId && <RunPicker runs={list} value={runId} onPick={setPicked} />}
      {run && <RunView key={run.id} client={client} taskId={t.id} run={run} onNewRun={showRun} onEnded={refresh} />}
    </Page>
  );
}

/** Which of the task's runs is shown, newest first. */
function RunPicker({ runs, value, onPick }: { runs: TaskRun[]; value: string; onPick(runId: string): void }) {
  const id = useId();
  return (
    <div className="tasks-run-picker">
      <label htmlFor={id}>Run</label>
      <select id={id} value={value} onChange={(e) => onPick(e.target.value)}>
        {runs.map((r) => (
          <option key={r.id} value={r.id}>
            #{r.number} · {statusLabel(r.status)} · {formatTime(r.created_at)}
          </option>
        ))}
      </select>
    </div>
  );
}

/** What the task runs, as it was created. */
function TaskFacts({ task: t }: { task: Task }) {
  const facts: Array<[string, string | undefined, boolean?]> = [
    ['Command', t.shell_command ?? t.git_command, true],
    ['File', t.file_path ? `${t.file_operation ?? 'write'} ${t.file_path}` : undefined, true],
    ['Prompt', t.prompt || undefined],
    ['Model', t.requested_model ? `${t.requested_model}${t.requested_provider ? ` via ${t.requested_provider}` : ''}` : undefined],
    ['Saved agent', t.agent_id ? `${t.agent_id} v${t.agent_version ?? '?'}` : undefined, true],
    ['Working directory', t.working_directory, true],
    ['Workspace', t.workspace_mode],
    ['Budget', t.budget_micros_usd ? formatMicrosUsd(t.budget_micros_usd) : undefined],
    ['Last error', t.last_error],
  ];
  return (
    <dl className="tasks-dl tasks-dl--grid">
      {facts
        .filter(([, v]) => v)
        .map(([k, v, code]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd className="tasks-pre-wrap">{code ? <code>{v}</code> : v}</dd>
          </div>
        ))}
    </dl>
  );
}
