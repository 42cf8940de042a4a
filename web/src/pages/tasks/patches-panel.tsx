import { useEffect, useId, useState } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { ErrorNotice } from '../../components/ErrorNotice';
import { useAction } from '../../components/useAction';
import { useResource } from '../../components/useResource';
import { Status } from './status';
import type { TaskPatch } from './types';

/**
 * The run's patches (docs/api.md §4.3 `patches`): each file change with its unified diff; a proposed patch can be
 * applied and an applied one reverted, each only if the file has not drifted since — a drift answers 409 and its
 * envelope (what changed, what to do) is shown on the patch.
 */
export function PatchesPanel({ client, taskId, runId, version }: { client: HecateClient; taskId: string; runId: string; version: string }) {
  const patches = useResource(
    async (signal) => (await client.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/patches', { path: { task_id: taskId, run_id: runId }, signal })).data,
    [client, taskId, runId, version],
  );
  const headingId = useId();
  if (!patches.data?.length && !patches.error) return null;
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Patches</h2>
      <ErrorNotice error={patches.error} onRetry={patches.reload} title="The patches did not load" />
      <ul className="tasks-patches">
        {patches.data?.map((p) => (
          <PatchItem key={p.artifact.id} client={client} taskId={taskId} runId={runId} patch={p} />
        ))}
      </ul>
    </section>
  );
}

function PatchItem({ client, taskId, runId, patch: initial }: { client: HecateClient; taskId: string; runId: string; patch: TaskPatch }) {
  const [patch, setPatch] = useState(initial);
  // The list loaded again (the run changed the patch): show what it says now.
  useEffect(() => setPatch(initial), [initial]);
  const change = useAction();
  const [done, setDone] = useState('');
  const path = { task_id: taskId, run_id: runId, artifact_id: patch.artifact.id };

  const act = (action: 'apply' | 'revert') => {
    setDone('');
    return change.run(async () => {
      const answer =
        action === 'apply'
          ? await client.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/patches/{artifact_id}/apply', { path })
          : await client.post('/hecate/v1/tasks/{task_id}/runs/{run_id}/patches/{artifact_id}/revert', { path });
      setPatch(answer.data);
      setDone(action === 'apply' ? `Applied ${answer.data.path}.` : `Reverted ${answer.data.path}.`);
    });
  };

  return (
    <li>
      <p className="tasks-patch__head">
        <code>{patch.path}</code> <span className="hint">{patch.before_existed ? patch.operation : `${patch.operation}, new file`}</span>{' '}
        <Status status={patch.status} />
      </p>
      <DiffView diff={patch.diff} label={`Diff of ${patch.path}`} />
      <div className="actions">
        {patch.status === 'proposed' && (
          <button type="button" disabled={change.busy} onClick={() => void act('apply')}>
            Apply {patch.path}
          </button>
        )}
        {patch.status === 'applied' && (
          <button type="button" className="secondary" disabled={change.busy} onClick={() => void act('revert')}>
            Revert {patch.path}
          </button>
        )}
      </div>
      <p role="status" className="hint">
        {done}
      </p>
      <ErrorNotice error={change.error} title={`The patch to ${patch.path} was not changed`} />
    </li>
  );
}

/** A unified diff, each line marked as added, removed or a hunk header (the +/- stay in the text for readers). */
export function DiffView({ diff, label }: { diff: string; label: string }) {
  const lines = diff.replace(/\n$/, '').split('\n');
  return (
    <figure className="tasks-figure">
      <figcaption className="visually-hidden">{label}</figcaption>
      {/* Focusable so a keyboard can scroll a long diff. */}
      <pre className="tasks-diff" tabIndex={0}>
        {lines.map((line, i) => (
          <span key={i} className={lineClass(line)}>
            {line}
            {'\n'}
          </span>
        ))}
      </pre>
    </figure>
  );
}

function lineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'tasks-diff__file';
  if (line.startsWith('@@')) return 'tasks-diff__hunk';
  if (line.startsWith('+')) return 'tasks-diff__add';
  if (line.startsWith('-')) return 'tasks-diff__del';
  return '';
}
