import type { Schemas } from '@hecate/sdk';
import { useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatCount, formatMicrosUsd } from '../../components/format';
import { Loading } from '../../components/Loading';
import { useResource } from '../../components/useResource';

type Capabilities = Schemas['ModelCapabilities'];

const yesNo = (v: boolean | null): string => (v === null ? 'protocol default' : v ? 'yes' : 'no');
const perMillion = (micros: number): string => `${formatMicrosUsd(micros)} / 1M`;

/** The models a provider serves now, with the capabilities routing uses and the price billing uses. */
export function ProviderModels({ providerId }: { providerId: string }) {
  const hecate = useHecate();
  const models = useResource(
    async (signal) => (await hecate.get('/hecate/v1/providers/{id}/models', { signal, path: { id: providerId } })).data,
    [hecate, providerId],
  );
  return (
    <section aria-labelledby="models-title">
      <h2 id="models-title">Models of {providerId}: capabilities and pricing</h2>
      {models.error !== undefined && <ErrorNotice error={models.error} onRetry={models.reload} />}
      {models.data === undefined ? (
        models.loading && <Loading what="the models" />
      ) : models.data.length === 0 ? (
        <p>The provider serves no model now (see its readiness checks).</p>
      ) : (
        <table aria-label={`Models of ${providerId}`}>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Tool calls</th>
              <th scope="col">Streaming</th>
              <th scope="col" className="num">
                Context
              </th>
              <th scope="col">Images</th>
              <th scope="col">Continues a prefill</th>
              <th scope="col">From</th>
              <th scope="col" className="num">
                Input
              </th>
              <th scope="col" className="num">
                Output
              </th>
              <th scope="col">Price from</th>
            </tr>
          </thead>
          <tbody>
            {models.data.map(({ model, capabilities: c, price }) => (
              <tr key={model}>
                <th scope="row">
                  <code>{model}</code>
                </th>
                <td>{c.tool_calling}</td>
                <td>{c.streaming ? 'yes' : 'no'}</td>
                <td className="num">{c.max_context_tokens === null ? '—' : formatCount(c.max_context_tokens)}</td>
                <td>{c.image_input}</td>
                <td>{yesNo(c.assistant_prefill)}</td>
                <td>{sourceLabel(c.source)}</td>
                <td className="num">{perMillion(price.input_micros_usd_per_million_tokens)}</td>
                <td className="num">{perMillion(price.output_micros_usd_per_million_tokens)}</td>
                <td>{price.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function sourceLabel(source: Capabilities['source']): string {
  return source.replace(/_/g, ' ');
}
