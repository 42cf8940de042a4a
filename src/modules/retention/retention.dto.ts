import { ApiSchema } from '@nestjs/swagger';
import type { Assert, Documents, Returned } from '@core/http/openapi';
import type { RetentionService } from './retention.service';

/** One retention sweep of run events and artifacts (`results`: what each target removed). */
@ApiSchema({ name: 'RetentionRun' })
export class RetentionRunDto {
  id!: string;
  trigger!: 'scheduled' | 'manual';
  status!: 'running' | 'completed' | 'failed';
  results!: Record<string, unknown>;
  error?: string;
  started_at!: string;
  finished_at?: string;
}

type _RunDocumented = Assert<Documents<RetentionRunDto, Returned<RetentionService['sweep']>>>;
