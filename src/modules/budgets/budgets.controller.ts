import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Principal } from '@core/context/request-context';
import { ApiKeyService } from '@core/http/auth/api-key.service';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { RequireScope } from '@core/http/auth/require-scope.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { SAVED_AGENTS, type SavedAgentSource } from '@modules/tasks';
import { BudgetDeletedDto, BudgetResponseDto, BudgetTenantQueryDto, CreateBudgetDto, ListBudgetsQueryDto, PatchBudgetDto } from './budgets.dto';
import { BudgetsService, type SubjectCheck } from './budgets.service';

const PAGE = { has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page.' } };

/**
 * Spend budgets (docs/budgets.md). Reading needs the operator scope (a tenant's keys see its budgets and what is left);
 * creating, changing and deleting need `admin`, so a key cannot raise its own limit.
 */
@Controller('hecate/v1/budgets')
export class BudgetsController {
  private readonly subjectExists: SubjectCheck;

  constructor(
    private readonly budgets: BudgetsService,
    keys: ApiKeyService,
    @Inject(SAVED_AGENTS) agents: SavedAgentSource,
  ) {
    this.subjectExists = (tenantId, scope, id) =>
      scope === 'api_key'
        ? keys.belongsTo(tenantId, id)
        : agents.resolve(tenantId, id).then(
            () => true,
            () => false,
          );
  }

  @ApiEnvelope('budget', BudgetResponseDto)
  @ApiOperation({ summary: 'Create a spend budget' })
  @Post()
  @HttpCode(201)
  @RequireScope('admin')
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateBudgetDto) {
    return { object: 'budget', data: await this.budgets.create(p, dto, this.subjectExists) };
  }

  @ApiEnvelope('budgets', [BudgetResponseDto], { extra: PAGE })
  @ApiOperation({ summary: 'List the budgets with their current spend' })
  @Get()
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListBudgetsQueryDto) {
    return { object: 'budgets', ...(await this.budgets.list(this.budgets.tenantOf(p, q.tenant_id), q)) };
  }

  @ApiEnvelope('budget', BudgetResponseDto)
  @ApiOperation({ summary: 'Get a budget with its current spend' })
  @Get(':budget_id')
  async get(@CurrentPrincipal() p: Principal, @Param('budget_id') id: string, @Query() q: BudgetTenantQueryDto) {
    return { object: 'budget', data: await this.budgets.get(this.budgets.tenantOf(p, q.tenant_id), id) };
  }

  @ApiEnvelope('budget', BudgetResponseDto)
  @ApiOperation({ summary: "Change a budget's name, limit or thresholds" })
  @Patch(':budget_id')
  @RequireScope('admin')
  async patch(@CurrentPrincipal() p: Principal, @Param('budget_id') id: string, @Query() q: BudgetTenantQueryDto, @Body() dto: PatchBudgetDto) {
    return { object: 'budget', data: await this.budgets.update(this.budgets.tenantOf(p, q.tenant_id), id, dto) };
  }

  @ApiEnvelope('budget_deleted', BudgetDeletedDto)
  @ApiOperation({ summary: 'Delete a budget and its counters' })
  @Delete(':budget_id')
  @RequireScope('admin')
  async delete(@CurrentPrincipal() p: Principal, @Param('budget_id') id: string, @Query() q: BudgetTenantQueryDto) {
    return { object: 'budget_deleted', data: await this.budgets.delete(this.budgets.tenantOf(p, q.tenant_id), id) };
  }
}
