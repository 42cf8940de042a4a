import { ConflictError, NotFoundError } from '@core/http/domain-error';

export class ApprovalNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`approval ${id} not found`);
  }
}

export class ApprovalNotPendingError extends ConflictError {
  constructor(id: string, status: string) {
    super(`approval ${id} is ${status}; only a pending approval can be resolved`, {
      userMessage: 'This approval was already decided or cancelled.',
      operatorAction: 'Reload the task to see the current run state.',
      details: { approval_id: id, approval_status: status },
    });
  }
}
