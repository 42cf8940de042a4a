import type { McpConfig } from '@core/config/groups/mcp.env';
import { McpCommandNotAllowedError, McpSecretNotAllowedError } from './mcp.errors';
import { secretRefusals, unlistedStdioServers } from './mcp-policy';
import { mcpServerProblems } from './mcp-server-spec';

/**
 * Every create-time check of an `mcp_servers` list, for a task and a saved agent alike. The walls first: a
 * `$VAR` nobody allowlisted is refused for every caller (403 mcp.secret_reference_not_allowed), a stdio command off
 * GATEWAY_MCP_STDIO_ALLOW for API keys (403 mcp.command_not_allowed). Returns the shape problems (a 400's).
 */
export function checkMcpServers(list: unknown, config: McpConfig, maxServers: number, caller: { hostPaths: boolean }, field = 'mcp_servers'): string[] {
  const refused = secretRefusals(list, config);
  if (refused.length > 0) throw new McpSecretNotAllowedError(refused);
  const unlisted = caller.hostPaths ? [] : unlistedStdioServers(list, config);
  if (unlisted.length > 0) throw new McpCommandNotAllowedError(unlisted);
  return mcpServerProblems(list, maxServers, field);
}
