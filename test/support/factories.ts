import { newId } from '@modules/tasks/task-ids';
import type { TaskRunEntity } from '@modules/tasks/task-run.entity';
import type { TaskEntity } from '@modules/tasks/task.entity';

/**
 * Entity factories for tests that write rows directly (integration tests of repositories and the runtime): a complete
 * row with neutral values, overridden by what the test cares about. e2e tests create through the API instead.
 */
export function taskRow(over: Partial<TaskEntity> = {}): TaskEntity {
  const now = new Date();
  return {
    id: newId('task'),
    tenantId: 'tenant-a',
    title: '',
    prompt: '',
    systemPrompt: '',
    executionKind: 'shell',
    executionProfile: '',
    shellCommand: 'true',
    gitCommand: '',
    filePath: '',
    fileContent: '',
    fileOperation: '',
    workingDirectory: '',
    workspaceMode: '',
    repo: '',
    baseBranch: '',
    sandboxAllowedRoot: '',
    sandboxReadOnly: false,
    sandboxNetwork: false,
    priority: '',
    timeoutMs: 0,
    budgetMicrosUsd: 0,
    requestedProvider: '',
    requestedModel: '',
    mcpServers: [],
    agentId: null,
    agentVersion: null,
    apiKeyId: null,
    clientRef: null,
    maxTurns: 0,
    builtinTools: null,
    approvalPolicies: null,
    agentChat: false,
    status: 'queued',
    latestRunId: null,
    lastError: '',
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    finishedAt: null,
    ...over,
  };
}

/** A queued first run of `task`. */
export function runRow(task: Pick<TaskEntity, 'id' | 'tenantId' | 'executionKind'>, over: Partial<TaskRunEntity> = {}): TaskRunEntity {
  const now = new Date();
  return {
    id: newId('run'),
    tenantId: task.tenantId,
    taskId: task.id,
    number: 1,
    status: 'queued',
    executionKind: task.executionKind,
    workspaceMode: '',
    workspacePath: '',
    model: '',
    provider: '',
    providerKind: '',
    totalCostMicrosUsd: 0,
    priorCostMicrosUsd: 0,
    lastError: '',
    errorKind: '',
    resumedFromRunId: null,
    resumeReason: '',
    checkpoint: null,
    attempts: 0,
    leaseOwner: null,
    leaseToken: null,
    leaseExpiresAt: null,
    requestId: null,
    traceId: null,
    queuedAt: now,
    enqueuedAt: null,
    startedAt: null,
    finishedAt: null,
    createdAt: now,
    updatedAt: now,
    ...over,
  };
}
