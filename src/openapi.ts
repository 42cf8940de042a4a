import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ErrorType } from '@contracts/errors';
import { buildOpenApiDocument } from '@core/http/openapi';
import { AgentChatErrorType } from '@modules/agent-chat';
import { ChatSessionErrorType } from '@modules/chat-sessions';
import { McpErrorType } from '@modules/mcp';

/** Every `error.type` the API answers with: the API contract's table (contracts) and the modules' own dotted types. */
export const API_ERROR_TYPES: readonly string[] = [ErrorType, AgentChatErrorType, ChatSessionErrorType, McpErrorType].flatMap((types) => Object.values(types));

/** The document of the api role's routes (served at /openapi.json; `main.openapi` writes it for the SDK build). */
export const openApiDocument = (app: INestApplication, version: string): OpenAPIObject => buildOpenApiDocument(app, { version, errorTypes: API_ERROR_TYPES });
