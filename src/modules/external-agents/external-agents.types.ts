/**
 * The columns of an Agent Chat session (`agent_chat_sessions`) an External Agent session lives on: the adapter, the
 * workspace and model it runs with, the native ACP session, its state, and the adapter lease (docs/design.md §11.3).
 * Agent Chat's own session rows carry them too, so it hands its rows over as they are.
 */
export interface AdapterSessionRow {
  id: string;
  tenant_id: string;
  adapter_id: string;
  workspace: string;
  model: string;
  native_session_id: string;
  adapter_state: string;
  adapter_error: string;
  adapter_owner: string | null;
  adapter_token: string | null;
}

/** The worker request that opens a new External Agent session's adapter (initialize + session/new) on a worker of the runs queue. */
export const ADAPTER_OPEN_REQUEST = 'agent_chat.adapter_open';
export interface AdapterOpenRequest {
  session_id: string;
}
