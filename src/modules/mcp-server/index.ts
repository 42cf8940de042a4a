/** The MCP server edge's public face: only the composition root imports `@modules/mcp-server` (it mounts the controller). */
export { McpServerController } from './mcp-server.controller';
export { McpServerModule } from './mcp-server.module';
