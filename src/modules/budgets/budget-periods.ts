/** The periods a budget's limit applies to: calendar periods in UTC, or the budget's whole life. */
export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** Where a `total` budget's one window starts. */
const EPOCH = new Date(0);

/** The start of the window `at` falls in: midnight UTC, Monday 00:00 UTC (ISO weeks), the 1st 00:00 UTC, or the epoch. */
export function windowStart(period: BudgetPeriod, at: Date): Date {
  if (period === 'total') return EPOCH;
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  if (period === 'day') return new Date(day);
  if (period === 'month') return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const sinceMonday = (at.getUTCDay() + 6) % 7;
  return new Date(day - sinceMonday * 86_400_000);
}

/** When the window that starts at `start` ends and a new one (spent 0) begins; null: a `total` budget never resets. */
export function resetsAt(period: BudgetPeriod, start: Date): Date | null {
  if (period === 'total') return null;
  if (period === 'day') return new Date(start.getTime() + 86_400_000);
  if (period === 'week') return new Date(start.getTime() + 7 * 86_400_000);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/** The thresholds (percent of the limit) that `spent` has reached and `reached` does not yet hold, lowest first. */
export function newlyReached(thresholds: number[], reached: number[], spent: number, limit: number): number[] {
  return thresholds.filter((t) => !reached.includes(t) && spent * 100 >= t * limit).sort((a, b) => a - b);
}
