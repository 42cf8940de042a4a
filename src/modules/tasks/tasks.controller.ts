import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { Origin } from '@core/http/origin.decorator';
import { ApiEnvelope } from '@core/http/openapi';
import { ResolveApprovalDto, TaskApprovalResponseDto } from '@modules/approvals';
import { RunAttemptsService } from './run-attempts.service';
import { RunInterventionsService } from './run-interventions.service';
import { RunQueriesService } from './run-queries.service';
import { CreateTaskDto, ListTasksQueryDto, TaskResponseDto } from './task.dto';
import { TaskArtifactResponseDto, TaskRunResponseDto } from './task-run.dto';
import { TaskRemovalService } from './task-removal.service';
import { TasksService } from './tasks.service';

const by = (p: Principal): string => (p.apiKeyId ? `api_key:${p.apiKeyId}` : p.kind);

/** Tasks, their start, task-level artifacts and approvals (docs/api.md §4 "Lifecycle endpoints", approvals). */
@Controller('hecate/v1/tasks')
export class TasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly attempts: RunAttemptsService,
    private readonly interventions: RunInterventionsService,
    private readonly removal: TaskRemovalService,
    private readonly queries: RunQueriesService,
  ) {}

  @ApiEnvelope('task', TaskResponseDto)
  @ApiOperation({ summary: 'Create a task' })
  @Post()
  @HttpCode(200)
  async create(@CurrentPrincipal() p: Principal, @Body() dto: CreateTaskDto) {
    return { object: 'task', data: await this.tasks.create(p.tenantId, dto, { hostPaths: p.kind !== 'api_key', apiKeyId: p.apiKeyId }) };
  }

  @ApiEnvelope('tasks', [TaskResponseDto])
  @ApiOperation({ summary: 'List tasks' })
  @Get()
  async list(@CurrentPrincipal() p: Principal, @Query() q: ListTasksQueryDto) {
    return { object: 'tasks', data: await this.tasks.list(p.tenantId, q) };
  }

  @ApiEnvelope('task', TaskResponseDto)
  @ApiOperation({ summary: 'Get a task' })
  @Get(':task_id')
  async get(@CurrentPrincipal() p: Principal, @Param('task_id') id: string) {
    return { object: 'task', data: await this.tasks.get(p.tenantId, id) };
  }

  @ApiOperation({ summary: 'Delete a task' })
  @Delete(':task_id')
  @HttpCode(204)
  async delete(@CurrentPrincipal() p: Principal, @Param('task_id') id: string): Promise<void> {
    await this.removal.delete(p.tenantId, id);
  }

  @ApiEnvelope('task_run', TaskRunResponseDto)
  @ApiOperation({ summary: "Start a task's next run" })
  @Post(':task_id/start')
  @HttpCode(200)
  async start(@CurrentPrincipal() p: Principal, @Origin() origin: RequestOrigin, @Param('task_id') id: string) {
    return { object: 'task_run', data: await this.attempts.start(p.tenantId, id, origin) };
  }

  @ApiEnvelope('task_artifacts', [TaskArtifactResponseDto])
  @ApiOperation({ summary: "List a task's artifacts" })
  @Get(':task_id/artifacts')
  async artifacts(@CurrentPrincipal() p: Principal, @Param('task_id') id: string) {
    return { object: 'task_artifacts', data: await this.queries.listTaskArtifacts(p.tenantId, id) };
  }

  @ApiEnvelope('task_approvals', [TaskApprovalResponseDto])
  @ApiOperation({ summary: "List a task's approvals" })
  @Get(':task_id/approvals')
  async approvals(@CurrentPrincipal() p: Principal, @Param('task_id') id: string) {
    return { object: 'task_approvals', data: await this.queries.listApprovals(p.tenantId, id) };
  }

  @ApiEnvelope('task_approval', TaskApprovalResponseDto)
  @ApiOperation({ summary: 'Get a task approval' })
  @Get(':task_id/approvals/:approval_id')
  async approval(@CurrentPrincipal() p: Principal, @Param('task_id') id: string, @Param('approval_id') approvalId: string) {
    return { object: 'task_approval', data: await this.queries.getApproval(p.tenantId, id, approvalId) };
  }

  @ApiEnvelope('task_approval', TaskApprovalResponseDto)
  @ApiOperation({ summary: 'Resolve a task approval' })
  @Post(':task_id/approvals/:approval_id/resolve')
  @HttpCode(200)
  async resolve(
    @CurrentPrincipal() p: Principal,
    @Origin() origin: RequestOrigin,
    @Param('task_id') id: string,
    @Param('approval_id') approvalId: string,
    @Body() dto: ResolveApprovalDto,
  ) {
    return { object: 'task_approval', data: await this.interventions.resolveApproval(p.tenantId, id, approvalId, dto.decision, dto.note ?? '', by(p), origin) };
  }
}
