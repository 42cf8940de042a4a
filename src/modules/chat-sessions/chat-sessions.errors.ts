import { ConflictError, DomainError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';

export const ChatSessionErrorType = {
  Superseded: 'chat_session.superseded',
  BranchBusy: 'chat_session.branch_busy',
  NotRunning: 'chat_session.not_running',
  NotContinuable: 'chat_session.not_continuable',
  IdempotencyMismatch: 'chat_session.idempotency_mismatch',
} as const;

export class ChatSessionNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`chat session ${id} not found`, {
      userMessage: 'The chat session does not exist.',
      operatorAction: 'Check the session id; it may have been deleted.',
    });
  }
}

export class ChatMessageNotFoundError extends NotFoundError {
  constructor(sessionId: string, messageId: string) {
    super(`message ${messageId} not found in chat session ${sessionId}`, { userMessage: 'The message does not exist in this chat.' });
  }
}

/** A write to a pre-compression snapshot: the conversation continues in another session. */
export class ChatSessionSupersededError extends ConflictError {
  constructor(id: string, canonicalVisibleSessionId: string) {
    super(
      `chat session ${id} is a pre-compression snapshot; the conversation continues in ${canonicalVisibleSessionId}`,
      {
        userMessage: 'This chat was compacted and continues in a newer session.',
        operatorAction: 'Send writes to canonical_visible_session_id (GET /hecate/v1/chat/sessions/{session_id}/resolve).',
        details: { canonical_visible_session_id: canonicalVisibleSessionId },
      },
      ChatSessionErrorType.Superseded,
    );
  }
}

export class ChatBranchBusyError extends ConflictError {
  constructor(sessionId: string, leafId: string, inFlightMessageId: string | null) {
    super(
      `a generation is already running on this branch of chat session ${sessionId}`,
      {
        userMessage: 'A reply is still being generated on this branch.',
        operatorAction: 'Wait for it to finish or POST …/stop, then retry.',
        details: { session_id: sessionId, leaf_id: leafId, in_flight_message_id: inFlightMessageId },
      },
      ChatSessionErrorType.BranchBusy,
    );
  }
}

export class ChatNotRunningError extends ConflictError {
  constructor(sessionId: string) {
    super(
      `nothing is being generated in chat session ${sessionId}`,
      { userMessage: 'There is no reply in progress to stop.', operatorAction: 'Nothing to do.' },
      ChatSessionErrorType.NotRunning,
    );
  }
}

export class ChatNotContinuableError extends ConflictError {
  constructor(messageId: string, reason: string) {
    super(
      `message ${messageId} cannot be continued: ${reason}`,
      { userMessage: 'This message cannot be continued.', operatorAction: 'Regenerate it instead.' },
      ChatSessionErrorType.NotContinuable,
    );
  }
}

export class ChatIdempotencyMismatchError extends ConflictError {
  constructor(clientRequestId: string) {
    super(
      `client_request_id ${clientRequestId} was already used with different content`,
      { userMessage: 'This request id was already used for another message.', operatorAction: 'Use a new client_request_id for a new message.' },
      ChatSessionErrorType.IdempotencyMismatch,
    );
  }
}

export class ChatInvalidMessageError extends InvalidRequestError {}

/** Wraps a generation failure with the ids of the stored (failed) messages. */
export function withTurnIds(err: unknown, ids: Record<string, string | null>): unknown {
  if (!(err instanceof DomainError)) return err;
  return new DomainError(err.type, err.status, err.message, {
    userMessage: err.userMessage,
    operatorAction: err.operatorAction,
    details: { ...err.details, ...ids },
    headers: err.headers,
    cause: err,
  });
}
