import { Injectable } from '@nestjs/common';

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
 * Where tasks and Agent Chat find saved agents. The agents module registers itself (it imports the tasks module for
 * MCP sealing and validation, so tasks cannot import it).
 */
@Injectable()
export class SavedAgents {
  private source: SavedAgentSource | undefined;

  register(source: SavedAgentSource): void {
    this.source = source;
  }

  resolve(tenantId: string, agentId: string, version?: number): Promise<SavedAgentSpec> {
    if (!this.source) throw new Error('saved agents are not loaded in this process (AgentsModule missing)');
    return this.source.resolve(tenantId, agentId, version);
  }
}
