import { useId } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { ArtifactContent } from './artifacts-panel';
import { formatTime } from '../../components/format';
import { Status } from './status';
import type { Activity, TaskArtifact } from './types';

const TYPE_LABELS: Record<Activity['type'], string> = {
  thinking: 'Model turn',
  tool_call: 'Tool call',
  approval: 'Approval',
  patch: 'Patch',
  changed_files: 'Files changed',
  final_answer: 'Final answer',
  run_result: 'Run result',
  step: 'Step',
  artifact: 'Artifact',
};

/** Bookkeeping rows: under Details, so the high-signal path stays readable. */
const LOW_LEVEL = new Set<Activity['type']>(['step', 'artifact']);

/**
 * The run's compact timeline — the `activity` array the run stream carries, the same vocabulary the Agent Chat
 * transcript uses: model turns, tool calls, approvals, changed files, the final answer and the run's end. Steps and
 * raw artifacts go under Details; each row has an Advanced disclosure with its raw fields, a failed tool call shows
 * the stdout and stderr captured for that step, and the final answer is shown in full.
 */
export function ActivityTimeline({ client, activity, artifacts }: { client: HecateClient; activity: Activity[]; artifacts: TaskArtifact[] }) {
  const headingId = useId();
  const main = activity.filter((a) => !LOW_LEVEL.has(a.type));
  const details = activity.filter((a) => LOW_LEVEL.has(a.type));
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Activity</h2>
      {main.length === 0 ? (
        <p className="hint">Nothing has happened yet.</p>
      ) : (
        <ol className="tasks-timeline" aria-labelledby={headingId}>
          {main.map((item) => (
            <ActivityRow key={item.id} client={client} item={item} artifacts={artifacts} />
          ))}
        </ol>
      )}
      {details.length > 0 && (
        <details className="tasks-details">
          <summary>Details ({details.length})</summary>
          <ol className="tasks-timeline">
            {details.map((item) => (
              <ActivityRow key={item.id} client={client} item={item} artifacts={artifacts} />
            ))}
          </ol>
        </details>
      )}
    </section>
  );
}

function ActivityRow({ client, item, artifacts }: { client: HecateClient; item: Activity; artifacts: TaskArtifact[] }) {
  const error = typeof item.summary?.error === 'string' ? item.summary.error : undefined;
  const outputs =
    item.type === 'tool_call' && item.status === 'failed'
      ? artifacts.filter((a) => a.step_id === item.step_id && (a.kind === 'stdout' || a.kind === 'stderr'))
      : [];
  const final = item.type === 'final_answer' && item.artifact_id ? artifacts.find((a) => a.id === item.artifact_id) : undefined;
  return (
    <li className={`tasks-activity tasks-activity--${item.type}`}>
      <p className="tasks-activity__head">
        <span className="tasks-activity__type">{TYPE_LABELS[item.type] ?? item.type}</span>
        {item.tool_name && <code>{item.tool_name}</code>}
        {item.title && item.title !== item.tool_name && <span>{item.title}</span>}
        {item.path && <code>{item.path}</code>}
        {item.status && <Status status={item.status} />}
        {item.needs_action && <strong>needs your decision</strong>}
        <time className="hint" dateTime={item.occurred_at}>
          {formatTime(item.occurred_at)}
        </time>
      </p>
      {error && <p className="tasks-activity__error">{error}</p>}
      {final && <ArtifactContent client={client} artifact={final} label="The final answer" />}
      {outputs.map((a) => (
        <div key={a.id}>
          <p className="tasks-label">{a.kind}</p>
          <ArtifactContent client={client} artifact={a} label={`${a.kind} of this tool call`} />
        </div>
      ))}
      <details className="tasks-advanced">
        <summary>Advanced</summary>
        <pre className="tasks-output">{JSON.stringify(item, null, 2)}</pre>
      </details>
    </li>
  );
}
