import { ConflictError, DomainError, NotFoundError } from '@core/http/domain-error';

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

/** The `agent_chat.*` error types of an External Agent turn's approvals (the Agent Chat API's, unchanged). */
const TurnApprovalErrorType = {
  ApprovalNotPending: 'agent_chat.approval_not_pending',
  ApprovalChoiceInvalid: 'agent_chat.approval_choice_invalid',
} as const;

export class AgentChatApprovalNotFoundError extends NotFoundError {
  constructor(sessionId: string, approvalId: string) {
    super(`approval ${approvalId} not found in agent chat session ${sessionId}`, { userMessage: 'The approval request does not exist in this chat.' });
  }
}

/** A decision for a request that was already settled (by an operator, a grant, the timeout, or its request dying). */
export class AgentChatApprovalNotPendingError extends ConflictError {
  constructor(approvalId: string, status: string, path: string | null) {
    super(
      `approval ${approvalId} is ${status}${path ? ` (${path})` : ''}; only a pending approval can be resolved`,
      {
        userMessage: 'This request was already decided, timed out, or cancelled.',
        operatorAction: 'Reload the approvals (GET …/approvals?status=pending).',
        details: { approval_id: approvalId, approval_status: status, path },
      },
      TurnApprovalErrorType.ApprovalNotPending,
    );
  }
}

/** A `scope` the request does not offer, or a `selected_option` that is not one of the agent's options for the decision. */
export const approvalChoiceInvalid = (message: string, details: Record<string, unknown>): DomainError =>
  new DomainError(TurnApprovalErrorType.ApprovalChoiceInvalid, 400, message, {
    userMessage: 'That choice is not available for this request.',
    operatorAction: "Pick one of the request's scope_choices and options.",
    details,
  });

export class AgentChatGrantNotFoundError extends NotFoundError {
  constructor(grantId: string) {
    super(`grant ${grantId} not found`, { userMessage: 'The grant does not exist (it may have expired or been revoked).' });
  }
}
