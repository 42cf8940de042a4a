import { useId, useState } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { formatTime } from '../../components/format';
import { Loading } from '../../components/Loading';
import { useResource } from '../../components/useResource';
import { TaskError } from './error-notice';
import { formatBytes, type TaskArtifact } from './types';

/** The run's artifacts (stdout, stderr, patches, summaries, conversation checkpoints), each opened on demand. */
export function ArtifactsPanel({ client, artifacts }: { client: HecateClient; artifacts: TaskArtifact[] }) {
  const headingId = useId();
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Artifacts</h2>
      {artifacts.length === 0 ? (
        <p className="hint">No artifacts yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Artifact</th>
              <th scope="col">Kind</th>
              <th scope="col">Size</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {artifacts.map((a) => (
              <ArtifactRow key={a.id} client={client} artifact={a} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function ArtifactRow({ client, artifact: a }: { client: HecateClient; artifact: TaskArtifact }) {
  const [open, setOpen] = useState(false);
  const name = a.name || a.path || a.kind;
  return (
    <>
      <tr>
        <th scope="row">
          <button type="button" className="tasks-link-button" aria-expanded={open} onClick={() => setOpen(!open)}>
            {name}
          </button>
        </th>
        <td>{a.kind}</td>
        <td>
          {formatBytes(a.size_bytes)}
          {a.truncated ? ' (truncated)' : ''}
        </td>
        <td>{a.status ?? '—'}</td>
        <td>{formatTime(a.created_at)}</td>
      </tr>
      {open && (
        <tr>
          <td colSpan={5}>
            <ArtifactContent client={client} artifact={a} label={`Content of ${name}`} />
          </td>
        </tr>
      )}
    </>
  );
}

/** An artifact's text, loaded when shown (lists leave the content out). */
export function ArtifactContent({
  client,
  artifact: a,
  label,
}: {
  client: HecateClient;
  artifact: Pick<TaskArtifact, 'id' | 'task_id' | 'run_id'>;
  label: string;
}) {
  const content = useResource(
    async (signal) =>
      (await client.get('/hecate/v1/tasks/{id}/runs/{runId}/artifacts/{artifactId}', { path: { id: a.task_id, runId: a.run_id, artifactId: a.id }, signal }))
        .data,
    [client, a.task_id, a.run_id, a.id],
  );
  if (content.error) return <TaskError error={content.error} title="The artifact did not load" />;
  if (!content.data) return <Loading what="the artifact" />;
  const text = content.data.content_text ?? '';
  return (
    <figure className="tasks-figure">
      <figcaption className="visually-hidden">{label}</figcaption>
      {text === '' ? (
        <p className="hint">(empty: captured, with no bytes)</p>
      ) : (
        <pre className="tasks-output" tabIndex={0}>
          {text}
        </pre>
      )}
    </figure>
  );
}
