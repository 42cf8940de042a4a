import { useState } from 'react';
import { useCaller, useHecate } from '../../app/hecate';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Loading } from '../../components/Loading';
import { Page } from '../../components/Page';
import { useResource } from '../../components/useResource';
import { LocalDiscovery } from './LocalDiscovery';
import { AddProviderForm, EditProviderForm } from './ProviderForm';
import { ProviderModels } from './ProviderModels';
import { ProviderStatusList } from './ProviderStatusList';
import './providers.css';

type Editing = { mode: 'add'; initial?: { presetId: string; baseUrl: string } } | { mode: 'edit'; id: string } | undefined;

/**
 * Providers: status and readiness (why routing would skip one, and what to do), adding from a preset or editing one
 * (`admin`), each provider's models with capabilities and pricing, and local runtimes found on this machine.
 */
export default function ProvidersPage() {
  const hecate = useHecate();
  const caller = useCaller();
  const admin = caller.can('admin');
  const [refreshing, setRefreshing] = useState(false);
  const [refreshError, setRefreshError] = useState<unknown>();
  const [editing, setEditing] = useState<Editing>();
  const [selected, setSelected] = useState<string>();
  const statuses = useResource(async (signal) => (await hecate.get('/hecate/v1/providers/status', { signal })).data, [hecate], { refreshMs: 10_000 });
  const presets = useResource(async (signal) => (admin ? (await hecate.get('/hecate/v1/providers/presets', { signal })).data : []), [hecate, admin]);

  /** Discovery again, now (the status reads use the cached lists). */
  const rediscover = async () => {
    setRefreshing(true);
    setRefreshError(undefined);
    try {
      await hecate.get('/hecate/v1/providers/status', { query: { refresh: '1' } });
    } catch (err) {
      setRefreshError(err);
    } finally {
      setRefreshing(false);
      statuses.reload();
    }
  };
  const done = () => {
    setEditing(undefined);
    statuses.reload();
  };
  return (
    <Page
      title="Providers"
      actions={
        <>
          <button type="button" className="secondary" onClick={() => void rediscover()} disabled={refreshing}>
            {refreshing ? 'Refreshing…' : 'Refresh discovery'}
          </button>
          {admin && (
            <button type="button" onClick={() => setEditing({ mode: 'add' })}>
              Add provider
            </button>
          )}
        </>
      }
    >
      {editing?.mode === 'add' && presets.data && (
        <AddProviderForm
          presets={presets.data}
          initial={editing.initial}
          onDone={(id) => {
            setSelected(id);
            done();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {editing?.mode === 'edit' && <EditProviderForm key={editing.id} providerId={editing.id} onDone={done} />}

      <section aria-labelledby="status-title">
        <h2 id="status-title">Status and readiness</h2>
        {refreshError !== undefined && <ErrorNotice error={refreshError} title="Discovery failed" />}
        {statuses.error !== undefined && <ErrorNotice error={statuses.error} onRetry={statuses.reload} />}
        {statuses.data === undefined ? (
          statuses.loading && <Loading what="the providers" />
        ) : (
          <ProviderStatusList
            statuses={statuses.data}
            selected={selected}
            onSelect={(name) => setSelected(name === selected ? undefined : name)}
            onEdit={admin ? (id) => setEditing({ mode: 'edit', id }) : undefined}
          />
        )}
      </section>

      {selected && <ProviderModels key={selected} providerId={selected} admin={admin} />}
      <LocalDiscovery onAdd={admin ? (presetId, baseUrl) => setEditing({ mode: 'add', initial: { presetId, baseUrl } }) : undefined} />
    </Page>
  );
}
