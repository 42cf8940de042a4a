/** The mcp module's public face (docs/design.md §5): the MCP client of the agent loop, its probe and cache stats. */
export { McpClientPool } from './mcp-client-pool.service';
export type { McpCacheStats, McpCallOptions, McpCallResult, McpOpenContext, McpTool, McpToolSet } from './mcp-client-pool.service';
export { McpController } from './mcp.controller';
export { McpModule } from './mcp.module';
export { McpWorkerModule } from './mcp-worker.module';
export { MAX_TOOLS_PER_REQUEST, MCP_APPROVAL_POLICIES, MCP_SERVER_NAME, mcpServerEntryProblems, mcpServerProblems, mcpToolAlias } from './mcp-server-spec';
export type { McpApprovalPolicy, McpServerSpec } from './mcp-server-spec';
export {
  envReference,
  hasLiteralMcpValues,
  keepRedactedMcpValues,
  redactMcpServers,
  REDACTED,
  sealMcpServers,
  SEALED_MCP_VALUE,
  unsealMcpServers,
} from './mcp-servers-redaction';
export { McpCommandNotAllowedError, McpErrorType, McpSecretNotAllowedError } from './mcp.errors';
export { secretRefusals, unlistedStdioServers } from './mcp-policy';
export { checkMcpServers } from './mcp-server-checks';
