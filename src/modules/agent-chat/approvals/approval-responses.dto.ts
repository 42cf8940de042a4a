import { ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents, Returned } from '@core/http/openapi';
import type { ApprovalPath, ApprovalScope, Decision, ToolKind, TurnApprovalStatus as ApprovalStatus } from '@modules/approvals';
import type { AgentChatApprovalsService } from './agent-chat-approvals.service';
import type { ApprovalRequestedFrame, ApprovalResolvedFrame } from './approval-views';

/** Wire shapes of Agent Chat approvals and grants, and the session stream's `approval.*` frames (docs/api.md §4), checked against their views. */

@ApiSchema({ name: 'AgentChatApprovalOption' })
export class AgentChatApprovalOptionDto {
  option_id!: string;
  name!: string;
  kind!: string;
}

/** An External Agent's permission request and its decision (docs/api.md §4 approvals). */
@ApiSchema({ name: 'AgentChatApproval' })
export class AgentChatApprovalDto {
  id!: string;
  session_id!: string;
  turn_id!: string | null;
  adapter_id!: string;
  workspace!: string;
  tool_call_id!: string;
  tool_kind!: ToolKind;
  tool_name!: string;
  options!: AgentChatApprovalOptionDto[];
  scope_choices!: ApprovalScope[];
  status!: ApprovalStatus;
  decision!: Decision | null;
  scope!: ApprovalScope | null;
  path!: ApprovalPath | null;
  selected_option!: string | null;
  grant_id!: string | null;
  note!: string;
  created_at!: string | null;
  expires_at!: string | null;
  resolved_at!: string | null;
}

@ApiSchema({ name: 'AgentChatGrant' })
export class AgentChatGrantDto {
  id!: string;
  scope!: ApprovalScope;
  decision!: 'allow' | 'deny';
  adapter_id!: string;
  tool_kind!: ToolKind;
  workspace!: string | null;
  session_id!: string | null;
  approval_id!: string | null;
  note!: string;
  created_at!: string | null;
  expires_at!: string | null;
}

@ApiSchema({ name: 'AgentChatGrantRevoked' })
export class AgentChatGrantRevokedDto extends AgentChatGrantDto {
  deleted!: boolean;
}

/**
 * `approval.requested` on the session stream (docs/api.md §4), one shape for every runtime: an External Agent's permission
 * request (`adapter_id`, `expires_at`; decided at `POST …/agent-chat/sessions/{session_id}/approvals/{approval_id}/resolve`) or
 * the task approval a Hecate Agent turn's run waits on (`task_id`, `run_id`, `kind`; decided at
 * `POST /hecate/v1/tasks/{task_id}/approvals/{approval_id}/resolve`). Sent when the request commits, in order with the
 * turn's other frames (it has their `id:`), so a client resuming later gets it too.
 */
@ApiSchema({ name: 'AgentChatApprovalRequestedFrame' })
export class AgentChatApprovalRequestedFrameDto {
  type!: 'approval.requested';
  approval_id!: string;
  session_id?: string;
  turn_id?: string;
  /** Hecate Agent turns: the backing task and run (null for an External Agent's request). */
  task_id!: string | null;
  run_id!: string | null;
  /** External Agent turns: the adapter (null for a task approval). */
  adapter_id!: string | null;
  /** Task approvals: the approval's kind (`agent_loop_tool_call`, …). */
  kind!: string | null;
  tool_kind!: ToolKind;
  tool_name!: string;
  scope_choices!: ApprovalScope[];
  created_at!: string | null;
  expires_at!: string | null;
}

/**
 * `approval.resolved` on the session stream (docs/api.md §4): sent when the decision commits — before anything the agent
 * does after it. `path`: `operator`, `grant`, `default_mode`, `timeout`, `request_cancelled`. A task approval's
 * rejection shows as `status: denied`, `decision: deny`.
 */
@ApiSchema({ name: 'AgentChatApprovalResolvedFrame' })
export class AgentChatApprovalResolvedFrameDto {
  type!: 'approval.resolved';
  approval_id!: string;
  session_id?: string;
  turn_id?: string;
  task_id!: string | null;
  run_id!: string | null;
  kind!: string | null;
  status!: ApprovalStatus;
  decision!: Decision | null;
  scope!: ApprovalScope | null;
  path!: ApprovalPath | null;
  selected_option!: string | null;
  resolved_at!: string | null;
}

type _ApprovalDocumented = Assert<Documents<AgentChatApprovalDto, Returned<AgentChatApprovalsService['get']>>>;
type _GrantDocumented = Assert<Documents<AgentChatGrantDto, Returned<AgentChatApprovalsService['grants']>[number]>>;
type _RequestedFrameDocumented = Assert<Documents<AgentChatApprovalRequestedFrameDto, ApprovalRequestedFrame>>;
type _ResolvedFrameDocumented = Assert<Documents<AgentChatApprovalResolvedFrameDto, ApprovalResolvedFrame>>;
type _RevokedDocumented = Assert<Documents<AgentChatGrantRevokedDto, Returned<AgentChatApprovalsService['revokeGrant']>>>;
