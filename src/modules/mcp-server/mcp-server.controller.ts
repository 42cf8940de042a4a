import { Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import { CurrentPrincipal } from '@core/http/auth/current-principal.decorator';
import { Origin } from '@core/http/origin.decorator';
import { McpServerService } from './mcp-server.service';

/**
 * `/mcp`: MCP over Streamable HTTP, behind the same authentication as /hecate/v1 (a bearer API key or the operator
 * token, the `operator` scope; the local operator when no token is configured). Stateless: POST only — GET (a
 * server-initiated stream) and DELETE (ending a session) answer 405, as the transport specification allows. DNS rebinding
 * protection (Host/Origin) is the server-wide browser wall (core/http/browser-edge.ts).
 */
@Controller('mcp')
export class McpServerController {
  constructor(private readonly mcp: McpServerService) {}

  @ApiOperation({ summary: 'Send an MCP message (Streamable HTTP)' })
  @Post()
  async post(
    @CurrentPrincipal() principal: Principal,
    @Origin() origin: RequestOrigin,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    // The transport writes the response itself; it keeps the request id and trace id headers set so far.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    await this.mcp.handle({ principal, origin }, request.raw, reply.raw, request.body);
  }

  @ApiOperation({ summary: 'Open an MCP server stream (always 405)' })
  @Get()
  get(@Res() reply: FastifyReply): Promise<void> {
    return notAllowed(reply);
  }

  @ApiOperation({ summary: 'End an MCP session (always 405)' })
  @Delete()
  delete(@Res() reply: FastifyReply): Promise<void> {
    return notAllowed(reply);
  }
}

async function notAllowed(reply: FastifyReply): Promise<void> {
  await reply
    .status(405)
    .header('allow', 'POST')
    .send({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP server is stateless (POST only, no session, no server-initiated stream)' },
      id: null,
    });
}
