import { useEffect, useId, useRef } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { ActivityTimeline } from './activity-timeline';
import { ApprovalBanner } from './approval-banner';
import { ArtifactsPanel } from './artifacts-panel';
import { formatDuration, formatMicrosUsd, formatTime } from '../../components/format';
import { TaskError } from './error-notice';
import { PatchesPanel } from './patches-panel';
import { RunActions } from './run-actions';
import { useLiveText, useRunStream, type RunStreamState } from './run-stream';
import { Status } from './status';
import { elapsedMs, isActiveStatus, type TaskRun } from './types';

interface Props {
  client: HecateClient;
  taskId: string;
  /** The run as listed, shown until the stream's first frame brings its live state. */
  run: TaskRun;
  onNewRun(run: TaskRun): void;
  /** The run reached its end (the stream's `done`). */
  onEnded?(run: TaskRun): void;
}

/**
 * One run, live: its state, approvals, actions, streamed output, activity, patches and artifacts, all from the run
 * stream's frames. Mount it with `key={runId}` so another run starts from a clean state.
 */
export function RunView({ client, taskId, run: listed, onNewRun, onEnded }: Props) {
  const stream = useRunStream(client, taskId, listed.id);
  const snapshot = stream.snapshot;
  const run = snapshot?.run ?? listed;
  const agent = run.execution_kind === 'agent_loop';
  const live = useLiveText(client, taskId, listed.id, agent);
  const pending = (snapshot?.approvals ?? []).filter((a) => a.status === 'pending');
  const patchVersion = (snapshot?.artifacts ?? [])
    .filter((a) => a.kind === 'patch')
    .map((a) => `${a.id}:${a.status ?? ''}`)
    .join(',');

  // Tell the page once that the run ended, so it refreshes the task and its runs.
  const told = useRef(false);
  useEffect(() => {
    if (!stream.ended || told.current) return;
    told.current = true;
    onEnded?.(run);
  }, [stream.ended, run, onEnded]);

  return (
    <div className="tasks-run">
      <RunHeader run={run} />
      {stream.error !== undefined && (
        <div>
          <TaskError error={stream.error} title="The live stream stopped" />
          <button type="button" className="secondary" onClick={stream.reconnect}>
            Reconnect
          </button>
        </div>
      )}
      {pending.map((a) => (
        <ApprovalBanner key={a.id} client={client} approval={a} />
      ))}
      <RunActions client={client} run={run} onNewRun={onNewRun} />
      {agent ? <LiveModelText text={live.text} running={isActiveStatus(run.status)} /> : <OutputLog stream={stream} running={!stream.ended} />}
      <ActivityTimeline client={client} activity={snapshot?.activity ?? []} artifacts={snapshot?.artifacts ?? []} />
      {patchVersion && <PatchesPanel client={client} taskId={taskId} runId={run.id} version={patchVersion} />}
      <ArtifactsPanel client={client} artifacts={snapshot?.artifacts ?? []} />
    </div>
  );
}

function RunHeader({ run }: { run: TaskRun }) {
  const headingId = useId();
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Run #{run.number}</h2>
      <p>
        Status:{' '}
        <span role="status">
          <Status status={run.status} />
        </span>
      </p>
      <dl className="tasks-dl tasks-dl--grid">
        {run.model && (
          <div>
            <dt>Model</dt>
            <dd>
              {run.model}
              {run.provider ? ` via ${run.provider}` : ''}
            </dd>
          </div>
        )}
        <div>
          <dt>Cost</dt>
          <dd>
            {formatMicrosUsd(run.total_cost_micros_usd)}
            {run.prior_cost_micros_usd > 0 ? ` (with the runs before it: ${formatMicrosUsd(run.prior_cost_micros_usd + run.total_cost_micros_usd)})` : ''}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatTime(run.started_at ?? run.queued_at)}</dd>
        </div>
        <div>
          <dt>Took</dt>
          <dd>{formatDuration(elapsedMs(run.started_at, run.finished_at))}</dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{run.attempts}</dd>
        </div>
        {run.workspace_path && (
          <div>
            <dt>Workspace</dt>
            <dd>
              <code>{run.workspace_path}</code>
            </dd>
          </div>
        )}
        {run.resumed_from_run_id && (
          <div>
            <dt>Picks up from</dt>
            <dd>
              <code>{run.resumed_from_run_id}</code>
              {run.checkpoint?.reason ? ` (${run.checkpoint.reason})` : ''}
            </dd>
          </div>
        )}
      </dl>
      {run.last_error && (
        <p className="tasks-activity__error">
          {run.error_kind ? <code>{run.error_kind}</code> : null} {run.last_error}
        </p>
      )}
    </section>
  );
}

/** The commands' output as it streams: a log region, so a screen reader hears new lines as they come. */
function OutputLog({ stream, running }: { stream: RunStreamState; running: boolean }) {
  const headingId = useId();
  if (stream.output.length === 0 && !running) return null;
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Output</h2>
      {stream.trimmedBytes > 0 && (
        <p className="hint">Earlier output left out here ({stream.trimmedBytes} characters); the stdout and stderr artifacts have all of it.</p>
      )}
      <pre className="tasks-output tasks-output--live" role="log" aria-labelledby={headingId} tabIndex={0}>
        {stream.output.map((c, i) => (
          <span key={i} className={c.stream === 'stderr' ? 'tasks-output__stderr' : undefined}>
            {c.text}
          </span>
        ))}
      </pre>
    </section>
  );
}

/** An agent loop's model text as it streams (the live stream's deltas). */
function LiveModelText({ text, running }: { text: string; running: boolean }) {
  const headingId = useId();
  if (!text && !running) return null;
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Model output</h2>
      <div className="tasks-output tasks-output--live" role="log" aria-labelledby={headingId} tabIndex={0}>
        {text || <span className="hint">Waiting for the model…</span>}
      </div>
    </section>
  );
}
