import { Controller, Get, Headers, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { ModelsService } from './models.service';

@Controller('v1')
export class ModelsController {
  constructor(private readonly models: ModelsService) {}

  /** OpenAI list shape; Anthropic's shape when the client sends `anthropic-version` (the Anthropic SDK does). */
  @ApiOperation({ summary: 'List the models' })
  @Get('models')
  async list(@Query('refresh') refresh?: string, @Headers('anthropic-version') anthropicVersion?: string) {
    const rows = await this.models.list(refresh === '1' || refresh === 'true');
    if (!anthropicVersion) return { object: 'list', data: rows };
    const data = rows.map((r) => ({ type: 'model', id: r.id, display_name: r.id, created_at: new Date(r.created * 1000).toISOString(), metadata: r.metadata }));
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
  }
}
