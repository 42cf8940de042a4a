import { ErrorType } from '@contracts/errors';
import { ConflictError, DomainError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';

export class TaskNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`task ${id} not found`);
  }
}

export class RunNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`task run ${id} not found`);
  }
}

export class StepNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`task step ${id} not found`);
  }
}

export class ArtifactNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`task artifact ${id} not found`);
  }
}

export class InvalidTaskError extends InvalidRequestError {
  constructor(problems: string[]) {
    super(problems.join('; '), { details: { problems } });
  }
}

export class RunTransitionError extends ConflictError {
  constructor(runId: string, from: string, to: string) {
    super(`run ${runId} cannot go from ${from} to ${to}`, { details: { run_id: runId, run_status: from } });
  }
}

export class TaskBusyError extends ConflictError {
  constructor(taskId: string, runId: string, status: string) {
    super(`task ${taskId} has an active run (${runId} is ${status})`, {
      userMessage: 'The task already has a queued, running or approval-waiting run.',
      operatorAction: 'Wait for the run to finish, resolve its approval, or cancel it.',
      details: { task_id: taskId, latest_run_id: runId, run_status: status },
    });
  }
}

export class PatchConflictError extends ConflictError {
  constructor(message: string, details: Record<string, unknown>) {
    super(message, {
      userMessage: 'The file changed since the patch was captured.',
      operatorAction: 'Inspect the file; apply or revert by hand if the change is still wanted.',
      details,
    });
  }
}

export class ExecutionKindUnavailableError extends DomainError {
  constructor(kind: string, known: string[]) {
    super(ErrorType.InvalidRequest, 400, `execution_kind "${kind}" is not available; available: ${known.join(', ')}`, {
      userMessage: 'This execution kind is not available on this server.',
      operatorAction: `Use one of: ${known.join(', ')}.`,
    });
  }
}

/** 409: a task names a literal MCP env/header value, and this deployment has no key to store it encrypted. */
export class McpSecretKeyMissingError extends ConflictError {
  constructor() {
    super('cannot store a literal MCP env or header value: GATEWAY_SECRET_KEY is not set', {
      userMessage: 'Literal MCP secrets cannot be stored without an encryption key.',
      operatorAction: 'Set GATEWAY_SECRET_KEY (the same value on every api and worker) and restart, or refer to a $HECATE_MCP_SECRET_* variable instead.',
    });
  }
}
