/** The budgets module's public face. */
export { BudgetGuard, type SpendHold, type Spender } from './budget-guard.service';
export { BudgetsController } from './budgets.controller';
export { BudgetsModule, BudgetsWorkerModule } from './budgets.module';
