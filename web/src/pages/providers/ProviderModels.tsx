import { useState } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatCount, formatMicrosUsd } from '../../components/format';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { useResource } from '../../components/useResource';
import { ModelSettings } from './ModelSettings';

type Capabilities = Schemas['ModelCapabilities'];

const yesNo = (v: boolean | null): string => (v === null ? 'protocol default' : v ? 'yes' : 'no');
const perMillion = (micros: number): string => `${formatMicrosUsd(micros)} / 1M`;

/**
 * The models a provider serves now, with the capabilities routing uses and the price billing uses; `admin` may open a
 * model's settings (capability override, probe result, price).
 */
export function ProviderModels({ providerId, admin }: { providerId: string; admin: boolean }) {
  const hecate = useHecate();
  const models = useResource(
    async (signal) => (await hecate.get('/hecate/v1/providers/{provider_id}/models', { signal, path: { provider_id: providerId } })).data,
    [hecate, providerId],
  );
  const [open, setOpen] = useState<string>();
  const openRow = models.data?.find((m) => m.model === open);
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
              {admin && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {models.data.map((row) => (
              <ModelRow
                key={row.model}
                row={row}
                open={admin ? open === row.model : undefined}
                onToggle={() => setOpen(open === row.model ? undefined : row.model)}
              />
            ))}
          </tbody>
        </table>
      )}
      {admin && openRow && <ModelSettings key={openRow.model} row={openRow} onChanged={models.reload} onClose={() => setOpen(undefined)} />}
    </section>
  );
}

/** One model's row; `open` is undefined when the caller may not change the model (no settings button). */
function ModelRow({ row, open, onToggle }: { row: Schemas['ProviderModel']; open: boolean | undefined; onToggle: () => void }) {
  const { model, capabilities: c, price } = row;
  return (
    <tr>
      <th scope="row">
        <code>{model}</code>
      </th>
      <td>{c.tool_calling}</td>
      <td>{c.streaming ? 'yes' : 'no'}</td>
      <td className="num">{c.max_context_tokens === null ? '—' : formatCount(c.max_context_tokens)}</td>
      <td>{c.image_input}</td>
      <td>{yesNo(c.assistant_prefill)}</td>
      <td>
        <SourceBadge source={c.source} />
      </td>
      <td className="num">{perMillion(price.input_micros_usd_per_million_tokens)}</td>
      <td className="num">{perMillion(price.output_micros_usd_per_million_tokens)}</td>
      <td>{price.source}</td>
      {open !== undefined && (
        <td>
          <button type="button" className="secondary" aria-pressed={open} aria-label={`Settings of ${model}`} onClick={onToggle}>
            Settings
          </button>
        </td>
      )}
    </tr>
  );
}

/** Where the capabilities come from; an operator's override or probe stands out from the defaults. */
function SourceBadge({ source }: { source: Capabilities['source'] }) {
  const label = source.replace(/_/g, ' ');
  if (source === 'operator_override') return <StatusBadge tone="warn">{label}</StatusBadge>;
  if (source === 'manual_probe') return <StatusBadge tone="ok">{label}</StatusBadge>;
  return <>{label}</>;
}
