import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';
import { MetricsService } from '@core/metrics/metrics.service';
import { EventStore } from '@modules/events';
import { newlyReached, resetsAt, windowStart } from './budget-periods';
import { BudgetLimitReachedError } from './budgets.errors';
import { BudgetBook } from './budget-book.service';
import { type BudgetRow, BudgetsRepository, type SettledWindow, type WindowKey } from './budgets.repository';

/** Whose spend a model call is: its tenant, the API key that made it or started its work, the saved agent it runs. */
export interface Spender {
  tenantId: string;
  apiKeyId?: string;
  agentId?: string;
}

/** A call let in by its budgets: `settle` with what it cost once it ended (0 for an attempt that failed before any usage). */
export interface SpendHold {
  settle(costMicros: number): void;
}

const UNBUDGETED: SpendHold = { settle: () => undefined };

/** The percentage that marks a window whose spend reached its limit (`budget.exhausted`, once per window). */
const EXHAUSTED = 100;

/**
 * The spend budgets' admission of each model attempt (docs/budgets.md), called by the inference engine before every
 * upstream attempt — first tries, retries and fallbacks alike, each at its own candidate's price. A call reserves its
 * worst case in the window of every budget that applies (tenant, key, agent), all or none, and only while the window's
 * spent plus reserved is below its limit; the settlement moves the real cost (the usage ledger's) into spent. So the
 * last call let in can take a budget at most its own cost over its limit, whatever the concurrency across processes.
 */
@Injectable()
export class BudgetGuard {
  constructor(
    private readonly repo: BudgetsRepository,
    private readonly book: BudgetBook,
    private readonly events: EventStore,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /** Reserves `worstCaseMicros` in the spender's budgets, or throws BudgetLimitReachedError (429) naming the first one full. */
  async admit(who: Spender, worstCaseMicros: number): Promise<SpendHold> {
    const budgets = await this.book.applicable(who.tenantId, who.apiKeyId, who.agentId);
    if (budgets.length === 0) return UNBUDGETED;
    const now = new Date();
    const windows = budgets.map((b) => ({ budgetId: b.id, windowStart: windowStart(b.period, now), limit: Number(b.limit_micros_usd) }));
    const reservation = `bres_${randomBytes(12).toString('hex')}`;
    const micros = Math.max(0, Math.ceil(worstCaseMicros));
    const refused = await this.repo.reserve(reservation, windows, micros, Math.ceil(this.config.gateway.budgets.reservationTtlMs / 1000));
    if (refused.length > 0) {
      const budget = budgets.find((b) => b.id === refused[0])!;
      this.metrics.budgetRefused(budget.scope);
      throw new BudgetLimitReachedError(
        await this.refusing(
          budget,
          windows.find((w) => w.budgetId === budget.id)!,
        ),
      );
    }
    let settled = false;
    return {
      settle: (costMicros) => {
        if (settled) return;
        settled = true;
        void this.settle(reservation, budgets, windows, Math.max(0, Math.round(costMicros)));
      },
    };
  }

  private async refusing(b: BudgetRow, key: WindowKey) {
    const counters = (await this.repo.windows([key])).get(b.id);
    return {
      id: b.id,
      name: b.name,
      scope: b.scope,
      subject_id: b.subject_id,
      period: b.period,
      limit_micros_usd: Number(b.limit_micros_usd),
      spent_micros_usd: Number(counters?.spent_micros_usd ?? 0),
      reserved_micros_usd: Number(counters?.reserved_micros_usd ?? 0),
      window_start: key.windowStart.toISOString(),
      resets_at: resetsAt(b.period, key.windowStart)?.toISOString() ?? null,
    };
  }

  /** Never throws: a settlement that fails leaves the reservation to expire (the sweep gives it back) and is logged. */
  private async settle(reservation: string, budgets: BudgetRow[], windows: WindowKey[], micros: number): Promise<void> {
    try {
      const rows = await this.repo.settle(reservation, windows, micros);
      for (const row of rows) {
        const budget = budgets.find((b) => b.id === row.budget_id);
        if (budget) await this.announce(budget, row);
      }
    } catch (err) {
      rootLogger().warn({ err: String(err), reservation, cost_micros_usd: micros }, 'budget settlement failed; the reservation expires and is given back');
    }
  }

  /** `budget.threshold_reached` for each threshold the spend reached, `budget.exhausted` at the limit: each once per window. */
  private async announce(b: BudgetRow, w: SettledWindow): Promise<void> {
    const spent = Number(w.spent_micros_usd);
    const limit = Number(w.limit_micros_usd);
    const due = newlyReached([...b.thresholds, EXHAUSTED], w.thresholds_reached, spent, limit);
    if (due.length === 0) return;
    const key = { budgetId: b.id, windowStart: new Date(w.window_start) };
    const base = {
      budget_id: b.id,
      name: b.name,
      scope: b.scope,
      subject_id: b.subject_id || null,
      period: b.period,
      window_start: key.windowStart.toISOString(),
      resets_at: resetsAt(b.period, key.windowStart)?.toISOString() ?? null,
      limit_micros_usd: limit,
      spent_micros_usd: spent,
    };
    await this.events.transaction(async (tx) => {
      for (const percent of due) {
        if (!(await this.repo.markReached(tx.manager, key, percent))) continue;
        const type = percent === EXHAUSTED ? 'budget.exhausted' : 'budget.threshold_reached';
        await tx.emit({ tenantId: b.tenant_id, runId: b.id, type, data: percent === EXHAUSTED ? base : { ...base, threshold_percent: percent } });
        this.metrics.budgetThresholdReached(b.scope, percent === EXHAUSTED ? 'exhausted' : 'threshold');
      }
    }, null);
  }
}
