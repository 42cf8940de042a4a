import { Controller, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { ApiEnvelope } from '@core/http/openapi';
import { WorkspaceDialogDto } from './agent-chat-responses.dto';
import { workspaceDialogUnsupported } from './agent-chat.errors';

/** docs/api.md §4 `POST /hecate/v1/workspace-dialog`: the local folder picker, which this headless server does not have (501). */
@Controller('hecate/v1')
export class WorkspaceDialogController {
  @ApiResponse({ status: 501, description: '`agent_chat.workspace_dialog_unsupported` (always, here): no native folder picker; enter the path by hand.' })
  @ApiEnvelope('workspace_dialog', WorkspaceDialogDto, {
    status: 200,
    description: "The seed's answer where the gateway has a native folder picker; never sent by this server (it has none: 501).",
  })
  @ApiOperation({ summary: 'Open a workspace picker (not supported)' })
  @Post('workspace-dialog')
  open(): never {
    throw workspaceDialogUnsupported();
  }
}
