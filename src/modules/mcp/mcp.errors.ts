import { DomainError, InvalidRequestError } from '@core/http/domain-error';
import type { SecretRefusal } from './mcp-policy';

/** The mcp module's own stable error types. */
export const McpErrorType = {
  CommandNotAllowed: 'mcp.command_not_allowed',
  SecretReferenceNotAllowed: 'mcp.secret_reference_not_allowed',
} as const;

/** 403: an API key named a stdio MCP server whose command and arguments no GATEWAY_MCP_STDIO_ALLOW entry matches. Nothing ran. */
export class McpCommandNotAllowedError extends DomainError {
  constructor(servers: string[]) {
    super(
      McpErrorType.CommandNotAllowed,
      403,
      `MCP stdio server${servers.length > 1 ? 's' : ''} ${servers.map((s) => `"${s}"`).join(', ')}: the command and arguments are not on the operator's allowlist`,
      {
        userMessage: 'This MCP server command is not allowed for API keys.',
        operatorAction: 'Add an entry {command, args, network} matching it to GATEWAY_MCP_STDIO_ALLOW, or run the task with the operator token.',
        details: { servers },
      },
    );
  }
}

/** 403: an MCP `env`/`headers` value refers to a variable the operator did not allowlist. Names the variable, never a value. */
export class McpSecretNotAllowedError extends DomainError {
  constructor(refusals: SecretRefusal[]) {
    super(
      McpErrorType.SecretReferenceNotAllowed,
      403,
      refusals.map((r) => `MCP server "${r.server}": ${r.field}.${r.key} refers to $${r.variable}, which MCP servers may not read`).join('; '),
      {
        userMessage: 'An MCP server refers to a variable it may not read.',
        operatorAction: 'Reference only HECATE_MCP_SECRET_* variables or names listed in GATEWAY_MCP_SECRET_ENV_ALLOW.',
        details: { refusals: refusals.map((r) => ({ server: r.server, field: r.field, key: r.key, variable: r.variable })) },
      },
    );
  }
}

/** 400: the probe entry is invalid, or the server did not start or list its tools (the message is the diagnostic). */
export class McpProbeFailedError extends InvalidRequestError {
  constructor(message: string, problems?: string[]) {
    super(message, {
      userMessage: 'The MCP server could not be probed.',
      operatorAction: 'Check the server entry (command, args, url, $VAR references) and that the server starts and answers tools/list.',
      ...(problems ? { details: { problems } } : {}),
    });
  }
}
