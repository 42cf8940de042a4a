import { useState } from 'react';
import type { HecateClient, Schemas } from '@hecate/sdk';
import type { Message } from './chat-store';
import { useResource } from '../../components/useResource';
import { formatDuration, formatMicrosUsd } from '../../components/format';
import { asHecateError } from './util';

interface Cost {
  micros: number;
  input: number;
  output: number;
  calls: number;
  source: string;
}

const BUCKETS: Array<[string, string]> = [
  ['queue_ms', 'queue'],
  ['model_ms', 'model'],
  ['tool_ms', 'tools'],
  ['approval_wait_ms', 'approval wait'],
  ['overhead_ms', 'overhead'],
];

/**
 * What one turn cost: a Hecate Agent turn's run total; a model turn's usage rows (they carry the turn's request id);
 * an External Agent turn metered by this gateway carries its own (`cost_micros_usd`), one on its own login is billed
 * elsewhere (`cost_mode: external`).
 */
async function turnCost(client: HecateClient, m: Message): Promise<Cost | null> {
  const metered = m as Message & { cost_micros_usd?: number; gateway_usage?: { input_tokens: number; output_tokens: number; requests: number } };
  if (m.runtime_kind === 'external_agent') {
    if (metered.cost_micros_usd === undefined) return null;
    const u = metered.gateway_usage;
    return { micros: metered.cost_micros_usd, input: u?.input_tokens ?? 0, output: u?.output_tokens ?? 0, calls: u?.requests ?? 0, source: 'gateway' };
  }
  if (m.task_id && m.run_id) {
    const run = (await client.get('/hecate/v1/tasks/{task_id}/runs/{run_id}', { path: { task_id: m.task_id, run_id: m.run_id } })).data as Schemas['TaskRun'];
    return { micros: run.total_cost_micros_usd, input: 0, output: 0, calls: Number(m.timing?.turn_count ?? 0), source: 'run' };
  }
  if (!m.request_id) return null;
  const events = (await client.get('/hecate/v1/usage/events', { query: { request_id: m.request_id, limit: 100 } })).data as Schemas['UsageEvent'][];
  return events.reduce<Cost>(
    (c, e) => ({
      micros: c.micros + e.cost_micros_usd,
      input: c.input + e.input_tokens,
      output: c.output + e.output_tokens,
      calls: c.calls + 1,
      source: 'usage',
    }),
    { micros: 0, input: 0, output: 0, calls: 0, source: 'usage' },
  );
}

function CostLine({ client, message }: { client: HecateClient; message: Message }) {
  const { data, error } = useResource(() => turnCost(client, message), [client, message.id, message.status]);
  if (error) return <span className="muted">cost not available ({asHecateError(error).type})</span>;
  if (data === undefined) return <span className="muted">cost…</span>;
  if (data === null) return <span>cost: {message.cost_mode === 'external' ? "billed to the agent's own login" : 'not recorded'}</span>;
  return (
    <span>
      cost {formatMicrosUsd(data.micros)}
      {data.input || data.output ? ` · ${data.input} in / ${data.output} out tokens` : ''}
      {data.calls ? ` · ${data.calls} model call${data.calls === 1 ? '' : 's'}` : ''}
    </span>
  );
}

/**
 * A reply's timing and cost: how long the turn took (and, for task-backed turns, where the time went) and what it
 * cost. The latest reply shows its cost at once; older ones on request (a long transcript does not read every cost).
 */
export function TurnMeta({ client, message, latest }: { client: HecateClient; message: Message; latest: boolean }) {
  const [asked, setAsked] = useState(false);
  const settled = ['completed', 'failed', 'cancelled', 'superseded'].includes(message.status);
  const timing = (message.timing ?? {}) as Record<string, unknown>;
  const buckets = BUCKETS.filter(([k]) => typeof timing[k] === 'number' && (timing[k] as number) > 0);
  return (
    <div className="chat-meta">
      {message.duration_ms !== undefined ? <span>took {formatDuration(message.duration_ms)}</span> : null}
      {buckets.length ? (
        <span>
          {' '}
          ({buckets.map(([k, label]) => `${label} ${formatDuration(timing[k] as number)}`).join(', ')}
          {typeof timing.bottleneck === 'string' ? `; bottleneck: ${timing.bottleneck}` : ''})
        </span>
      ) : null}
      {message.provider || message.model ? <span> · {[message.provider, message.model].filter(Boolean).join('/')}</span> : null}
      {' · '}
      {settled && (latest || asked) ? (
        <CostLine client={client} message={message} />
      ) : settled ? (
        <button type="button" className="chat-link" onClick={() => setAsked(true)}>
          Show cost
        </button>
      ) : null}
      {message.request_id ? (
        <span className="muted">
          {' '}
          · request <code>{message.request_id}</code>
        </span>
      ) : null}
    </div>
  );
}
