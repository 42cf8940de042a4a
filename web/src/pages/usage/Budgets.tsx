import { useId, useState, type FormEvent } from 'react';
import type { Schemas } from '@hecate/sdk';
import { useCaller, useHecate } from '../../app/hecate';
import { DataTable, type Column } from '../../components/DataTable';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatCount, formatMicrosUsd, formatTime } from '../../components/format';
import { Loaded } from '../../components/Loaded';
import { SelectField } from '../../components/SelectField';
import { StatusBadge } from '../../components/StatusBadge';
import { useAction } from '../../components/useAction';
import { useResource } from '../../components/useResource';

type Budget = Schemas['Budget'];
type Scope = Budget['scope'];
type Period = Budget['period'];

const SCOPES: Array<{ value: Scope; label: string }> = [
  { value: 'tenant', label: 'The whole tenant' },
  { value: 'api_key', label: 'One API key' },
  { value: 'agent', label: 'One saved agent' },
];
const PERIODS: Array<{ value: Period; label: string }> = [
  { value: 'day', label: 'Per day (UTC)' },
  { value: 'week', label: 'Per week (from Monday, UTC)' },
  { value: 'month', label: 'Per month (UTC)' },
  { value: 'total', label: 'In total' },
];

/** Where a budget stands: spent of its limit, and whether calls are still let in. */
function state(b: Budget) {
  const used = b.current.spent_micros_usd / b.limit_micros_usd;
  if (used >= 1) return <StatusBadge tone="error">spent</StatusBadge>;
  const crossed = b.current.thresholds_reached.length > 0;
  return <StatusBadge tone={crossed ? 'warn' : 'ok'}>{`${Math.floor(used * 100)} % used`}</StatusBadge>;
}

function DeleteCell({ budget, onDeleted }: { budget: Budget; onDeleted: () => void }) {
  const hecate = useHecate();
  const remove = useAction();
  const name = budget.name || budget.id;
  return (
    <>
      <button
        type="button"
        className="secondary"
        aria-label={`Delete budget ${name}`}
        disabled={remove.busy}
        onClick={() =>
          void remove.run(async () => {
            await hecate.delete('/hecate/v1/budgets/{budget_id}', { path: { budget_id: budget.id }, query: { tenant_id: budget.tenant_id } });
            onDeleted();
          })
        }
      >
        Delete
      </button>
      <ErrorNotice error={remove.error} title="Not deleted" />
    </>
  );
}

const columns = (admin: boolean, reload: () => void): Array<Column<Budget>> => [
  { header: 'Budget', rowHeader: true, cell: (b) => b.name || <code>{b.id}</code> },
  { header: 'Applies to', cell: (b) => (b.scope === 'tenant' ? `tenant ${b.tenant_id}` : `${b.scope === 'api_key' ? 'key' : 'agent'} ${b.subject_id}`) },
  { header: 'Period', cell: (b) => b.period },
  { header: 'Limit', num: true, cell: (b) => formatMicrosUsd(b.limit_micros_usd) },
  { header: 'Spent', num: true, cell: (b) => formatMicrosUsd(b.current.spent_micros_usd) },
  { header: 'Remaining', num: true, cell: (b) => formatMicrosUsd(b.current.remaining_micros_usd) },
  { header: 'In flight', num: true, cell: (b) => formatMicrosUsd(b.current.reserved_micros_usd) },
  { header: 'Calls', num: true, cell: (b) => formatCount(b.current.calls) },
  { header: 'Resets', cell: (b) => (b.current.resets_at ? formatTime(b.current.resets_at) : 'never') },
  { header: 'State', cell: state },
  ...(admin ? [{ header: 'Actions', hideHeader: true, cell: (b: Budget) => <DeleteCell budget={b} onDeleted={reload} /> }] : []),
];

function CreateBudgetForm({ onCreated }: { onCreated: () => void }) {
  const hecate = useHecate();
  const [scope, setScope] = useState<Scope>('tenant');
  const [subject, setSubject] = useState('');
  const [period, setPeriod] = useState<Period>('month');
  const [limit, setLimit] = useState('');
  const [name, setName] = useState('');
  const create = useAction();
  const ids = { subject: useId(), limit: useId(), name: useId() };
  const micros = Math.round(Number(limit) * 1_000_000);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(async () => {
      const body = {
        scope,
        period,
        limit_micros_usd: micros,
        thresholds: [50, 80],
        ...(scope === 'tenant' ? {} : { subject_id: subject.trim() }),
        ...(name.trim() ? { name: name.trim() } : {}),
      };
      await hecate.post('/hecate/v1/budgets', { body });
      setLimit('');
      setName('');
      onCreated();
    });
  };
  return (
    <form className="panel" aria-label="Create a budget" onSubmit={submit}>
      <h3>Create a budget</h3>
      <SelectField label="Applies to" value={scope} onChange={(v) => setScope(v as Scope)} options={SCOPES} />
      {scope !== 'tenant' && (
        <>
          <label htmlFor={ids.subject}>{scope === 'api_key' ? 'API key id' : 'Saved agent id'}</label>
          <input id={ids.subject} type="text" required value={subject} onChange={(e) => setSubject(e.target.value)} />
        </>
      )}
      <SelectField label="Period" value={period} onChange={(v) => setPeriod(v as Period)} options={PERIODS} />
      <label htmlFor={ids.limit}>Limit (USD)</label>
      <input id={ids.limit} type="number" min="0.000001" step="any" required value={limit} onChange={(e) => setLimit(e.target.value)} />
      <label htmlFor={ids.name}>Name (optional)</label>
      <input id={ids.name} type="text" maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      <p className="hint">Events at 50 % and 80 % of the limit; past it, model calls are refused (429) until the period resets.</p>
      <div className="actions">
        <button type="submit" disabled={create.busy || !(micros >= 1)}>
          {create.busy ? 'Creating…' : 'Create budget'}
        </button>
      </div>
      <ErrorNotice error={create.error} title="The budget was not created" />
    </form>
  );
}

/** Spend budgets of the caller's tenant: what each has spent and has left this period; admins create and delete them. */
export function Budgets({ refreshed }: { refreshed: number }) {
  const hecate = useHecate();
  const admin = useCaller().can('admin');
  const budgets = useResource(async (signal) => (await hecate.get('/hecate/v1/budgets', { signal, query: { limit: 200 } })).data, [hecate, refreshed]);
  return (
    <section aria-labelledby="budgets-title">
      <h2 id="budgets-title">Budgets</h2>
      <Loaded resource={budgets} what="the budgets">
        {(list) => (
          <DataTable
            caption="Spend budgets"
            columns={columns(admin, budgets.reload)}
            rows={list}
            rowKey={(b) => b.id}
            empty={<p>No budgets: model calls are not capped.</p>}
          />
        )}
      </Loaded>
      {admin && <CreateBudgetForm onCreated={budgets.reload} />}
    </section>
  );
}
