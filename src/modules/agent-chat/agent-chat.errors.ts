import { ErrorType } from '@contracts/errors';
import { ConflictError, DomainError, InvalidRequestError, NotFoundError } from '@core/http/domain-error';
import { ExternalAgentsErrorType } from '@modules/external-agents';

/** The `agent_chat.*` error table of docs/api.md §4. */
export const AgentChatErrorType = {
  WorkspaceRequired: 'agent_chat.workspace_required',
  ModelRequired: 'agent_chat.model_required',
  RuntimeKindInvalid: 'agent_chat.runtime_kind_invalid',
  RuntimeMismatch: 'agent_chat.runtime_mismatch',
  AdapterNotFound: 'agent_chat.adapter_not_found',
  /** Raised by the external-agents module, which opens the session's adapter. */
  AdapterStartFailed: ExternalAgentsErrorType.AdapterStartFailed,
  SessionBusy: 'agent_chat.agent_session_busy',
  SessionStopping: 'agent_chat.session_stopping',
  SessionNotRunning: 'agent_chat.session_not_running',
  ModelCapabilityRequired: 'agent_chat.model_capability_required',
  SessionLimitExceeded: 'agent_chat.session_limit_exceeded',
  SessionDurationLimitExceeded: 'agent_chat.session_duration_limit_exceeded',
  SessionIdleTimeout: 'agent_chat.session_idle_timeout',
  GuidanceConsumed: 'agent_chat.guidance_consumed',
  ApprovalNotPending: 'agent_chat.approval_not_pending',
  ApprovalChoiceInvalid: 'agent_chat.approval_choice_invalid',
  QueueFull: 'agent_chat.queue_full',
  /** 501 of `POST /hecate/v1/workspace-dialog`: no native folder picker here (docs/api.md §4: clients fall back to manual entry). */
  WorkspaceDialogUnsupported: 'agent_chat.workspace_dialog_unsupported',
} as const;

export class AgentChatSessionNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`agent chat session ${id} not found`, { userMessage: 'The chat does not exist.', operatorAction: 'Check the session id; it may have been deleted.' });
  }
}

export class AgentChatMessageNotFoundError extends NotFoundError {
  constructor(sessionId: string, messageId: string) {
    super(`message ${messageId} not found in agent chat session ${sessionId}`, { userMessage: 'The message does not exist in this chat.' });
  }
}

const invalid = (type: string, message: string, userMessage: string, operatorAction: string, details?: Record<string, unknown>) =>
  new DomainError(type, 400, message, { userMessage, operatorAction, details });

export const workspaceRequired = (): DomainError =>
  invalid(
    AgentChatErrorType.WorkspaceRequired,
    'Hecate Agent and External Agent chats need a workspace (an existing directory) before the first turn',
    'Select a workspace folder for this chat.',
    'Send `workspace` with the session or the turn.',
    { field: 'workspace' },
  );

export const modelRequired = (): DomainError =>
  invalid(
    AgentChatErrorType.ModelRequired,
    'Hecate Chat needs an explicit model for direct model and Hecate Agent turns',
    'Select a model for this chat.',
    'Send `model` with the session or the turn.',
    { field: 'model' },
  );

export const runtimeKindInvalid = (value: unknown): DomainError =>
  invalid(
    AgentChatErrorType.RuntimeKindInvalid,
    `runtime_kind ${JSON.stringify(value)} is not one of model, agent, external_agent`,
    'The chat runtime is not known.',
    'Use runtime_kind model, agent or external_agent.',
    { field: 'runtime_kind' },
  );

export const runtimeMismatch = (session: string, requested: string): DomainError =>
  invalid(
    AgentChatErrorType.RuntimeMismatch,
    `a ${session} session cannot run a ${requested} turn`,
    'This chat cannot switch to that runtime.',
    'Hecate Chat sessions switch between model and agent; External Agent sessions stay external_agent. Start a new chat instead.',
    { field: 'runtime_kind', session_runtime_kind: session },
  );

export const adapterNotFound = (adapterId: string): DomainError =>
  invalid(
    AgentChatErrorType.AdapterNotFound,
    `external-agent adapter ${JSON.stringify(adapterId)} is not registered`,
    'The selected external agent is not available.',
    'Choose a registered adapter (GET /hecate/v1/agent-adapters).',
    { field: 'adapter_id', adapter_id: adapterId },
  );

export class AgentSessionBusyError extends ConflictError {
  constructor(details: { task_id?: string | null; latest_run_id?: string | null; run_status: string; turn_id: string }) {
    super(
      'a turn of this chat is queued, running or awaiting approval',
      {
        userMessage: 'This chat is busy with a running turn.',
        operatorAction: 'Wait for the turn to finish, resolve its pending approval, or cancel it (POST …/cancel) before sending another prompt.',
        details: { ...details, task_id: details.task_id ?? undefined, latest_run_id: details.latest_run_id ?? undefined },
      },
      AgentChatErrorType.SessionBusy,
    );
  }
}

export class SessionStoppingError extends ConflictError {
  constructor(turnId: string) {
    super(
      'the chat is still cancelling its running turn',
      { userMessage: 'The chat is stopping.', operatorAction: 'Retry after the cancelled turn settles.', details: { turn_id: turnId } },
      AgentChatErrorType.SessionStopping,
    );
  }
}

export class SessionNotRunningError extends ConflictError {
  constructor(sessionId: string) {
    super(
      `agent chat session ${sessionId} has no running turn`,
      { userMessage: 'Nothing is running in this chat.', operatorAction: 'Nothing to stop.' },
      AgentChatErrorType.SessionNotRunning,
    );
  }
}

export const modelCapabilityRequired = (provider: string, model: string, capabilities: Record<string, unknown>): DomainError =>
  new DomainError(AgentChatErrorType.ModelCapabilityRequired, 422, `tools are on, but ${provider}/${model} is marked as not tool-capable`, {
    userMessage: 'The selected model cannot call tools.',
    operatorAction: 'Turn tools off for direct model chat, or mark the model tool-capable (PUT /hecate/v1/model-capabilities).',
    details: { provider, model, capabilities },
  });

export const guardrailExceeded = (
  type: (typeof AgentChatErrorType)['SessionLimitExceeded' | 'SessionDurationLimitExceeded' | 'SessionIdleTimeout'],
  message: string,
  details: Record<string, unknown>,
): DomainError =>
  new DomainError(type, 422, message, {
    userMessage: 'This chat reached a limit set by the operator.',
    operatorAction: 'Start a new chat, or raise GATEWAY_AGENT_CHAT_MAX_TURNS_PER_SESSION / _MAX_SESSION_DURATION / _IDLE_TIMEOUT.',
    details,
  });

export class GuidanceNotFoundError extends NotFoundError {
  constructor(sessionId: string, guidanceId: string) {
    super(`guidance ${guidanceId} not found in agent chat session ${sessionId}`, { userMessage: 'The guidance item does not exist.' });
  }
}

/** PATCH or DELETE of guidance a model call already took: it is a transcript message now. */
export class GuidanceConsumedError extends ConflictError {
  constructor(guidanceId: string, receipt: Record<string, unknown>) {
    super(
      `guidance ${guidanceId} was already consumed by the running turn`,
      {
        userMessage: 'This guidance was already delivered to the agent.',
        operatorAction: 'It is part of the transcript now; send new guidance instead.',
        details: receipt,
      },
      AgentChatErrorType.GuidanceConsumed,
    );
  }
}

/** A session whose queued-next FIFO (or pending guidance) holds as many items as the operator allows. */
export class AgentChatQueueFullError extends ConflictError {
  constructor(what: 'queued items' | 'pending guidance items', max: number) {
    super(
      `this chat already holds ${max} ${what} (GATEWAY_AGENT_CHAT_MAX_QUEUED_ITEMS)`,
      {
        userMessage: 'This chat has too many prompts waiting.',
        operatorAction: 'Wait for the running turn to take the waiting items, remove some, or raise GATEWAY_AGENT_CHAT_MAX_QUEUED_ITEMS.',
        details: { max_queued_items: max },
      },
      AgentChatErrorType.QueueFull,
    );
  }
}

/**
 * A prompt, queued item or guidance larger than GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES: refused (413) before anything is
 * stored or stopped; with `required`, blank content is refused too (400).
 */
export function checkContentSize(content: string | undefined, max: number, field = 'content', required = false): void {
  if (required && !content?.trim()) throw new InvalidRequestError(`${field} must not be empty`, { details: { field } });
  if (content === undefined || max <= 0) return;
  const bytes = Buffer.byteLength(content);
  if (bytes <= max) return;
  throw new DomainError(ErrorType.PayloadTooLarge, 413, `${field} is ${bytes} bytes; at most ${max} (GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES)`, {
    userMessage: 'The message is too large.',
    operatorAction: 'Send a shorter message (attach large text as a workspace file), or raise GATEWAY_AGENT_CHAT_MAX_CONTENT_BYTES.',
    details: { field, bytes, max_bytes: max },
  });
}

/**
 * docs/api.md §4 `POST /hecate/v1/workspace-dialog` answers 501 where the gateway has no native folder picker. This server
 * never has one: the api runs headless (often in a container or on another host than the browser) and never starts a
 * process or opens a workspace (docs/design.md §11.2), so clients take the API contract's fallback, a path typed by hand.
 */
export const workspaceDialogUnsupported = (): DomainError =>
  new DomainError(AgentChatErrorType.WorkspaceDialogUnsupported, 501, 'this server has no native folder picker: it runs headless and never opens a dialog', {
    userMessage: 'Folder selection is not available here; type the workspace path instead.',
    operatorAction: 'Enter the absolute workspace path by hand (API keys: a directory under GATEWAY_WORKSPACE_ROOTS).',
    details: { fallback: 'manual_entry' },
  });

/** Input optimisation without a model in the request and without the operator's default. */
export const optimizeInputModelRequired = (): DomainError =>
  invalid(
    AgentChatErrorType.ModelRequired,
    'input optimisation needs a model: send `model`, or set GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL on the server',
    'Select a model to rewrite the prompt with.',
    'Send `model` with the request, or set GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL (the default optimiser model).',
    { field: 'model', variable: 'GATEWAY_AGENT_CHAT_OPTIMIZE_INPUT_MODEL' },
  );
