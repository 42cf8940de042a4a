import { useId, useState } from 'react';
import type { HecateClient } from '@hecate/sdk';
import { DataTable, type Column } from '../../components/DataTable';
import { formatTime } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { useResource } from '../../components/useResource';
import { formatBytes, type TaskArtifact } from './types';

const artifactName = (a: TaskArtifact): string => a.name || a.path || a.kind;

/** The run's artifacts (stdout, stderr, patches, summaries, conversation checkpoints), each opened on demand. */
export function ArtifactsPanel({ client, artifacts }: { client: HecateClient; artifacts: TaskArtifact[] }) {
  const headingId = useId();
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const columns: Array<Column<TaskArtifact>> = [
    {
      header: 'Artifact',
      rowHeader: true,
      cell: (a) => (
        <button type="button" className="tasks-link-button" aria-expanded={open.has(a.id)} onClick={() => toggle(a.id)}>
          {artifactName(a)}
        </button>
      ),
    },
    { header: 'Kind', cell: (a) => a.kind },
    { header: 'Size', cell: (a) => `${formatBytes(a.size_bytes)}${a.truncated ? ' (truncated)' : ''}` },
    { header: 'Status', cell: (a) => a.status ?? '—' },
    { header: 'Created', cell: (a) => formatTime(a.created_at) },
  ];
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Artifacts</h2>
      <DataTable
        caption="Artifacts of this run"
        columns={columns}
        rows={artifacts}
        rowKey={(a) => a.id}
        empty={<p className="hint">No artifacts yet.</p>}
        detail={(a) => open.has(a.id) && <ArtifactContent client={client} artifact={a} label={`Content of ${artifactName(a)}`} />}
      />
    </section>
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
      (
        await client.get('/hecate/v1/tasks/{task_id}/runs/{run_id}/artifacts/{artifact_id}', {
          path: { task_id: a.task_id, run_id: a.run_id, artifact_id: a.id },
          signal,
        })
      ).data,
    [client, a.task_id, a.run_id, a.id],
  );
  return (
    <Loaded resource={content} what="the artifact" title="The artifact did not load">
      {({ content_text: text }) => (
        <figure className="tasks-figure">
          <figcaption className="visually-hidden">{label}</figcaption>
          {!text ? (
            <p className="hint">(empty: captured, with no bytes)</p>
          ) : (
            <pre className="tasks-output" tabIndex={0}>
              {text}
            </pre>
          )}
        </figure>
      )}
    </Loaded>
  );
}
