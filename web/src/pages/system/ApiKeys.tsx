import { useId, useState, type FormEvent } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useCaller, useHecate, type Scope } from '../../app/hecate';
import { DataTable, type Column } from '../../components/DataTable';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatTime } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { StatusBadge } from '../../components/StatusBadge';
import { useAction } from '../../components/useAction';
import { useResource } from '../../components/useResource';

type ApiKey = Schemas['ApiKey'];
type CreatedKey = Schemas['CreatedApiKey'];

const SCOPES: Array<{ scope: Scope; what: string }> = [
  { scope: 'inference', what: '/v1 model calls' },
  { scope: 'operator', what: "the tenant's own tasks, sessions, approvals and keys (/hecate/v1, /mcp)" },
  { scope: 'admin', what: 'settings every tenant shares: providers, pricing, probes, retention' },
];

/** The secret of a key just created: shown here once, never again (docs/security.md, "Who is trusted"). */
function NewSecret({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const secretId = useId();
  const copy = () =>
    void navigator.clipboard.writeText(created.secret).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return (
    <div className="panel new-secret" role="region" aria-label="New key secret">
      <p>
        <strong>Key “{created.name}” created.</strong> Copy its secret now: it is shown only once.
      </p>
      <label htmlFor={secretId}>Secret of the new key</label>
      <input id={secretId} className="secret" type="text" readOnly value={created.secret} onFocus={(e) => e.target.select()} />
      <div className="actions">
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy secret'}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const hecate = useHecate();
  const caller = useCaller();
  const operatorToken = caller.kind !== 'api_key';
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['operator']);
  const [tenant, setTenant] = useState('');
  const create = useAction();
  const nameId = useId();
  const tenantId = useId();

  const toggle = (scope: Scope, on: boolean) => setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(async () => {
      const body = { name: name.trim(), scopes, ...(operatorToken && tenant.trim() ? { tenant_id: tenant.trim() } : {}) };
      const { data } = await hecate.post('/hecate/v1/api-keys', { body });
      setName('');
      setTenant('');
      onCreated(data);
    });
  };

  return (
    <form className="panel" aria-label="Create an API key" onSubmit={submit}>
      <h3>Create a key</h3>
      <label htmlFor={nameId}>Key name</label>
      <input id={nameId} type="text" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map(({ scope, what }) => {
          // Only the operator token grants admin (the server refuses it to a key too).
          const allowed = scope !== 'admin' || operatorToken;
          return (
            <label key={scope} title={what}>
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                disabled={!allowed}
                onChange={(e) => toggle(scope, e.target.checked)}
                aria-describedby={`${nameId}-${scope}`}
              />
              {scope}
              <span id={`${nameId}-${scope}`} className="visually-hidden">
                {what}
              </span>
            </label>
          );
        })}
      </fieldset>
      {operatorToken && (
        <>
          <label htmlFor={tenantId}>Tenant (empty: {caller.tenant_id})</label>
          <input id={tenantId} type="text" pattern="[A-Za-z0-9._\-]{1,64}" value={tenant} onChange={(e) => setTenant(e.target.value)} />
        </>
      )}
      <div className="actions">
        <button type="submit" disabled={create.busy || name.trim() === '' || scopes.length === 0}>
          {create.busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
      <ErrorNotice error={create.error} title="The key was not created" />
    </form>
  );
}

/** Revoke, confirmed first: the key stops working at once. */
function RevokeCell({ apiKey, onRevoked }: { apiKey: ApiKey; onRevoked: () => void }) {
  const hecate = useHecate();
  const [confirming, setConfirming] = useState(false);
  const revoke = useAction();
  const confirm = () =>
    revoke.run(async () => {
      await hecate.delete('/hecate/v1/api-keys/{key_id}', { path: { key_id: apiKey.id } });
      setConfirming(false);
      onRevoked();
    });
  if (apiKey.revoked_at) return null;
  return (
    <>
      {confirming ? (
        <div className="actions">
          <button type="button" className="danger" disabled={revoke.busy} onClick={() => void confirm()}>
            Confirm revoking {apiKey.name}
          </button>
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="button" className="secondary" onClick={() => setConfirming(true)} aria-label={`Revoke ${apiKey.name}`}>
          Revoke
        </button>
      )}
      <ErrorNotice error={revoke.error} title="Not revoked" />
    </>
  );
}

const columns = (onRevoked: () => void): Array<Column<ApiKey>> => [
  { header: 'Name', rowHeader: true, cell: (k) => k.name },
  { header: 'Prefix', cell: (k) => <code>{k.prefix}</code> },
  { header: 'Tenant', cell: (k) => k.tenant_id },
  { header: 'Scopes', cell: (k) => k.scopes.join(', ') },
  { header: 'Created', cell: (k) => formatTime(k.created_at) },
  { header: 'Last used', cell: (k) => formatTime(k.last_used_at) },
  { header: 'State', cell: (k) => (k.revoked_at ? <StatusBadge tone="idle">revoked</StatusBadge> : <StatusBadge tone="ok">active</StatusBadge>) },
  { header: 'Actions', hideHeader: true, cell: (k) => <RevokeCell apiKey={k} onRevoked={onRevoked} /> },
];

/** API keys: list, create with scopes (the secret shown once), revoke. An API key sees its own tenant's keys. */
export function ApiKeys() {
  const hecate = useHecate();
  const keys = useResource(async (signal) => (await hecate.get('/hecate/v1/api-keys', { signal })).data, [hecate]);
  const [created, setCreated] = useState<CreatedKey>();
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {created && <NewSecret created={created} onDone={() => setCreated(undefined)} />}
      <CreateKeyForm
        onCreated={(key) => {
          setCreated(key);
          keys.reload();
        }}
      />
      <Loaded resource={keys} what="the keys">
        {(list) => <DataTable caption="API keys" columns={columns(keys.reload)} rows={list} rowKey={(k) => k.id} empty={<p>No keys yet.</p>} />}
      </Loaded>
    </section>
  );
}
