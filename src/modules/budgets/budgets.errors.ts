import { ErrorType } from '@contracts/errors';
import { ConflictError, DomainError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';
import { formatUsd } from '@core/money';

/** 404: no such budget in the caller's tenant (another tenant's budget is not found either). */
export class BudgetNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`budget ${id} not found`);
  }
}

export class InvalidBudgetError extends InvalidRequestError {
  constructor(problems: string[]) {
    super(problems.join('; '), { details: { problems } });
  }
}

/** 409: the tenant has a budget for this scope, subject and period already (change its limit instead). */
export class BudgetExistsError extends ConflictError {
  constructor(scope: string, subject: string, period: string) {
    super(`a ${period} budget for ${scope}${subject ? ` ${subject}` : ''} exists already`, {
      userMessage: 'This budget exists already.',
      operatorAction: 'PATCH the existing budget (GET /hecate/v1/budgets?scope=…) instead of creating another.',
    });
  }
}

export interface RefusingBudget {
  id: string;
  name: string;
  scope: string;
  subject_id: string;
  period: string;
  limit_micros_usd: number;
  spent_micros_usd: number;
  reserved_micros_usd: number;
  window_start: string;
  resets_at: string | null;
}

/**
 * 429 `budget_exceeded`: a spend budget of the caller (tenant, API key or saved agent) has no room for another model
 * call in this period — what it has spent and what calls in flight may still spend reach its limit. Names the budget
 * and when it resets (Retry-After, unless it is a `total` budget).
 */
export class BudgetLimitReachedError extends DomainError {
  constructor(budget: RefusingBudget) {
    const what = `${budget.period} budget ${budget.name || budget.id} (${budget.scope}${budget.subject_id ? ` ${budget.subject_id}` : ''})`;
    const until = budget.resets_at ? `; it resets at ${budget.resets_at}` : '; it does not reset (a total budget)';
    super(
      ErrorType.BudgetExceeded,
      429,
      `the ${what} has no room for another model call: ${formatUsd(budget.spent_micros_usd)} USD spent and ${formatUsd(budget.reserved_micros_usd)} USD in flight of its ${formatUsd(budget.limit_micros_usd)} USD limit${until}`,
      {
        userMessage: 'The spend budget for this work is used up for now.',
        operatorAction: 'Raise the limit (PATCH /hecate/v1/budgets/{budget_id}) or wait for the budget to reset.',
        details: { budget },
        headers: budget.resets_at ? { 'retry-after': String(Math.max(1, Math.ceil((Date.parse(budget.resets_at) - Date.now()) / 1000))) } : {},
      },
    );
  }
}
