import { useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';

/** Local runtimes (Ollama, LM Studio, llama.cpp, LocalAI) found on their default ports, with a way to add one. */
export function LocalDiscovery({ onAdd }: { onAdd?: (presetId: string, baseUrl: string) => void }) {
  const hecate = useHecate();
  const found = useResource(async (signal) => (await hecate.get('/hecate/v1/settings/providers/local-discovery', { signal })).data, [hecate]);
  return (
    <section aria-labelledby="local-title">
      <div className="page-head">
        <h2 id="local-title">Local discovery</h2>
        <div className="actions">
          <button type="button" className="secondary" onClick={found.reload} disabled={found.loading}>
            Look again
          </button>
        </div>
      </div>
      {found.error !== undefined && <ErrorNotice error={found.error} onRetry={found.reload} />}
      {found.data === undefined ? (
        found.loading && <Loading what="local runtimes" />
      ) : (
        <table aria-label="Local runtimes">
          <thead>
            <tr>
              <th scope="col">Runtime</th>
              <th scope="col">Address</th>
              <th scope="col">Answers</th>
              <th scope="col" className="num">
                Models
              </th>
              <th scope="col">Command</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {found.data.map((d) => (
              <tr key={d.preset_id}>
                <th scope="row">{d.name}</th>
                <td>
                  <code>{d.base_url}</code>
                </td>
                <td>
                  <StatusBadge tone={d.http_available ? 'ok' : 'idle'}>{d.status}</StatusBadge>
                </td>
                <td className="num">{d.model_count}</td>
                <td>
                  <code>{d.command}</code> {d.command_available ? `at ${d.command_path ?? 'PATH'}` : 'not installed'}
                </td>
                <td>
                  {onAdd && d.http_available && (
                    <button type="button" className="secondary" onClick={() => onAdd(d.preset_id, d.base_url)} aria-label={`Add ${d.name}`}>
                      Add
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
