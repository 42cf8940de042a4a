/**
 * A saved agent's definition as a task or an Agent Chat session uses it (docs/api.md §5 `agent_id`). `mcpServers`
 * are opened (literal secrets in the clear): they live in memory only, on their way into a task that seals them again.
 */
export interface SavedAgentSpec {
  id: string;
  version: number;
  runtimeKind: 'model' | 'agent';
  provider: string;
  model: string;
  systemPrompt: string;
  mcpServers: Record<string, unknown>[];
  /** Built-in tools the loop offers; null: all of them. */
  builtinTools: string[] | null;
  /** Approval policies of the loop's tool calls; null: the server's (GATEWAY_TASK_APPROVAL_POLICIES). */
  approvalPolicies: string[] | null;
  budgetMicrosUsd: number;
  /** Model calls a run may make; 0: the server's cap. */
  maxTurns: number;
}

export interface SavedAgentSource {
  /** The agent's latest version, or `version`; 404 for an unknown agent or another tenant's. */
  resolve(tenantId: string, agentId: string, version?: number): Promise<SavedAgentSpec>;
}

/**
 * The token tasks and Agent Chat inject their SavedAgentSource with (`@Inject(SAVED_AGENTS)`). The agents module
 * provides it (its AgentsService) and exports it to every module: it is global because it imports this module's
 * vocabulary (these types, McpSecretKeyMissingError), so tasks cannot import it. A process without it does not boot.
 */
export const SAVED_AGENTS = Symbol('SAVED_AGENTS');
