import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { busChannels, EventBus } from '@core/bus';
import { rootLogger } from '@core/logging/logger';
import { type BudgetRow, BudgetsRepository } from './budgets.repository';

/**
 * This process's copy of the budgets' definitions, so a model call of a tenant without budgets costs no query. A change
 * reloads it here before its answer, and rings `budgetsChanged` for the other processes (also reloaded after a bus
 * reconnect, as the pricing and provider settings are): until their reload lands they read the copy being reloaded,
 * never the old one once the doorbell arrived. The counters are never cached: admission reads them in Postgres.
 */
@Injectable()
export class BudgetBook implements OnModuleInit {
  private byTenant = new Map<string, BudgetRow[]>();
  private loading: Promise<void> | undefined;

  constructor(
    private readonly repo: BudgetsRepository,
    @Inject(EventBus) private readonly bus: EventBus,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.reload();
    this.bus.onReconnect(() => void this.reload().catch(logged));
    await this.bus.listen(busChannels.budgetsChanged, () => void this.reload().catch(logged));
  }

  /** The budgets a call of this tenant, key and saved agent counts against (tenant ones, the key's, the agent's). */
  async applicable(tenantId: string, apiKeyId: string | undefined, agentId: string | undefined): Promise<BudgetRow[]> {
    if (this.loading) await this.loading;
    const rows = this.byTenant.get(tenantId);
    if (!rows) return [];
    return rows.filter(
      (b) => b.scope === 'tenant' || (b.scope === 'api_key' && b.subject_id === apiKeyId) || (b.scope === 'agent' && b.subject_id === agentId),
    );
  }

  /** After a committed change: this process's copy first, then the others'. */
  async changed(): Promise<void> {
    await this.reload();
    await this.bus
      .send(busChannels.budgetsChanged, { at: Date.now() })
      .catch((err: unknown) =>
        rootLogger().warn({ err: String(err) }, 'budget change not announced; other processes reload on their next change or bus reconnect'),
      );
  }

  private reload(): Promise<void> {
    const load = this.repo.all().then((rows) => {
      const next = new Map<string, BudgetRow[]>();
      for (const b of rows) next.set(b.tenant_id, [...(next.get(b.tenant_id) ?? []), b]);
      this.byTenant = next;
    });
    // What lookups wait for: settles either way (a failed reload keeps the previous copy; its caller logs the failure).
    const settled = load.then(
      () => undefined,
      () => undefined,
    );
    this.loading = settled;
    void settled.then(() => {
      if (this.loading === settled) this.loading = undefined;
    });
    return load;
  }
}

function logged(err: unknown): void {
  rootLogger().warn({ err: String(err) }, 'budget definitions reload failed; the previous copy stays in use');
}
