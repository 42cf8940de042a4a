import { Injectable } from '@nestjs/common';
import { WorkspaceOps } from '@modules/tasks';
import type { Principal } from '@core/context/request-context';
import { AdapterCatalog } from '@modules/agent-adapters';
import { ExternalAgentSessions } from '@modules/external-agents';
import { canonicalWorkspace, newChatId } from '../agent-chat-inputs';
import type { CreateAgentChatSessionDto } from '../agent-chat.dto';
import { adapterNotFound, workspaceRequired } from '../agent-chat.errors';
import { AgentChatRepository } from '../agent-chat.repository';
import type { MessageRow } from '../agent-chat-rows';
import { UsageLedgerService } from '@modules/inference';
import { formatUsd } from '@core/money';

/**
 * External Agent sessions as Agent Chat keeps them (docs/design.md §11: the adapter runs on a worker). Create writes the
 * session and opens its adapter through the external-agents module, answering once the native session id is persisted;
 * an adapter that cannot start fails the create (502 with its diagnostic) and leaves no session behind. Close and
 * delete release the adapter there; metered turns get their cost from this gateway's usage rows.
 */
@Injectable()
export class ExternalSessionsService {
  constructor(
    private readonly repo: AgentChatRepository,
    private readonly sessions: ExternalAgentSessions,
    private readonly usage: UsageLedgerService,
    private readonly adapters: AdapterCatalog,
    private readonly ops: WorkspaceOps,
  ) {}

  /** External Agent create (docs/api.md §4): `adapter_id` and `workspace` required; returns the session id once the adapter is open. */
  async create(p: Principal, dto: CreateAgentChatSessionDto): Promise<string> {
    const adapterId = dto.adapter_id?.trim() ?? '';
    const def = this.adapters.find(adapterId);
    if (!def) throw adapterNotFound(adapterId);
    if (!dto.workspace?.trim()) throw workspaceRequired();
    const workspace = await canonicalWorkspace(this.ops, p, dto.workspace);
    const id = newChatId('agent_chat');
    await this.repo.insertSession({
      id,
      tenant_id: p.tenantId,
      title: dto.title?.trim() || `${def.name} chat`,
      runtime_kind: 'external_agent',
      // With a model, an adapter that can be pointed at a model endpoint runs against this gateway with it (metered).
      provider: dto.provider?.trim() ?? '',
      model: dto.model?.trim() ?? '',
      workspace,
      system_prompt: dto.system_prompt ?? '',
      adapter_id: adapterId,
      capabilities: {},
      status: 'idle',
      session_started_at: null,
    });
    await this.open(p.tenantId, id, adapterId);
    return id;
  }

  /** Opens the adapter on a worker (ExternalAgentSessions); any failure deletes the session, then raises. */
  private async open(tenantId: string, sessionId: string, adapterId: string): Promise<void> {
    try {
      await this.sessions.open(tenantId, sessionId, adapterId);
    } catch (err) {
      await this.repo.transaction((m) => this.repo.deleteSession(m, tenantId, sessionId));
      throw err;
    }
  }

  /**
   * Metered turns (`cost_mode: gateway`) get their cost from this gateway's own usage rows: the session key's calls
   * between the turn's start and end (`gateway_usage`, `cost_micros_usd`, `cost_usd`), all turns in one statement.
   * Rows recorded by another api process arrive within its usage flush interval.
   */
  async attachGatewayCosts(tenantId: string, rows: MessageRow[], views: Array<Record<string, unknown> & { id: string }>): Promise<void> {
    const metered = rows.filter((m) => m.metadata?.gateway_window);
    if (metered.length === 0) return;
    const windows = metered.map((m) => {
      const w = m.metadata.gateway_window as { api_key_id: string; from: string; to: string };
      return { apiKeyId: w.api_key_id, since: new Date(w.from), until: new Date(w.to) };
    });
    const totals = await this.usage.windowTotals(tenantId, windows);
    const byId = new Map(views.map((v) => [v.id, v]));
    metered.forEach((m, i) => {
      const view = byId.get(m.id);
      const t = totals[i];
      if (!view || !t) return;
      view.gateway_usage = { requests: t.requests, input_tokens: t.inputTokens, output_tokens: t.outputTokens, cost_micros_usd: t.costMicrosUsd };
      view.cost_micros_usd = t.costMicrosUsd;
      view.cost_usd = formatUsd(t.costMicrosUsd);
    });
  }

  /** `close` (history kept) or `delete`: the holder closes the native session and ends the process group. */
  release(sessionId: string, action: 'close' | 'delete'): Promise<void> {
    return this.sessions.release(sessionId, action);
  }
}
