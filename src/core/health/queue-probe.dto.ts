import { ApiSchema } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { Assert, Documents } from '@core/http/openapi';
import type { QueueProbeEntity, QueueProbeStatus } from './queue-probe.entity';

export class CreateQueueProbeDto {
  /** How long the worker holds the job (to observe drain and redelivery). */
  @IsOptional() @IsInt() @Min(0) @Max(600_000) sleep_ms?: number;
}

export const toQueueProbeResponse = (row: QueueProbeEntity) => ({
  id: row.id,
  status: row.status,
  sleep_ms: row.sleepMs,
  attempts: row.attempts,
  worker: row.worker,
  created_at: row.createdAt.toISOString(),
  started_at: row.startedAt ? row.startedAt.toISOString() : null,
  completed_at: row.completedAt ? row.completedAt.toISOString() : null,
});

/** An end-to-end check api → queue → worker → Postgres. */
@ApiSchema({ name: 'QueueProbe' })
export class QueueProbeResponseDto {
  id!: string;
  status!: QueueProbeStatus;
  sleep_ms!: number;
  attempts!: number;
  /** The worker that ran it. */
  worker!: string | null;
  created_at!: string;
  started_at!: string | null;
  completed_at!: string | null;
}

type _ProbeDocumented = Assert<Documents<QueueProbeResponseDto, ReturnType<typeof toQueueProbeResponse>>>;
