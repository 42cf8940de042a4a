import { createHash } from 'node:crypto';
import { storableText, storableValue } from '@core/database/storable';
import type { NewArtifact } from './run-step';
import type { TaskArtifactEntity } from './task-artifact.entity';
import { newId } from './task-ids';
import { retryTransient } from './transient-errors';

/** A write that would store more than GATEWAY_TASK_MAX_ARTIFACT_BYTES in one artifact or GATEWAY_TASK_MAX_RUN_STORED_BYTES in the run. */
export class StorageLimitError extends Error {
  readonly kind = 'storage_limit_exceeded';
  constructor(message: string) {
    super(message);
    this.name = 'StorageLimitError';
  }
}

/**
 * The row of a run's artifact. NUL in its content or metadata (a model's or a tool's output) is stored as U+FFFD; content
 * and metadata over `maxBytes` (0 = no cap) throw StorageLimitError before anything is written.
 */
export function artifactRow(ref: { tenantId: string; taskId: string; runId: string }, a: NewArtifact, maxBytes: number): TaskArtifactEntity {
  const now = new Date();
  const content = storableText(a.content);
  const metadata = storableValue(a.metadata ?? {});
  if (maxBytes > 0) {
    const bytes = Buffer.byteLength(content) + (a.metadata ? Buffer.byteLength(JSON.stringify(metadata)) : 0);
    if (bytes > maxBytes) throw new StorageLimitError(`artifact ${a.name} would be ${bytes} bytes; at most ${maxBytes} (GATEWAY_TASK_MAX_ARTIFACT_BYTES)`);
  }
  return {
    id: a.id ?? newId('artifact'),
    tenantId: ref.tenantId,
    taskId: ref.taskId,
    runId: ref.runId,
    stepId: a.stepId ?? null,
    kind: a.kind,
    name: a.name,
    description: a.description ?? '',
    mimeType: a.mimeType ?? 'text/plain',
    path: a.path ?? '',
    contentText: content,
    sizeBytes: Buffer.byteLength(content),
    sha256: createHash('sha256').update(content).digest('hex'),
    truncated: a.truncated ?? false,
    status: a.status ?? 'ready',
    metadata,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * What one attempt of a run may still store (artifacts' content and steps' results): what the run stored before the
 * attempt is read once, at its first write; each write then counts against GATEWAY_TASK_MAX_RUN_STORED_BYTES.
 */
export class RunStorageBudget {
  private before: Promise<number> | undefined;
  private added = 0;

  constructor(
    private readonly max: number,
    private readonly storedBefore: () => Promise<number>,
  ) {}

  async reserve(bytes: number): Promise<void> {
    if (this.max <= 0) return;
    this.before ??= retryTransient(this.storedBefore);
    const total = (await this.before) + this.added + bytes;
    if (total > this.max) throw new StorageLimitError(`the run would store ${total} bytes; at most ${this.max} (GATEWAY_TASK_MAX_RUN_STORED_BYTES)`);
    this.added += bytes;
  }
}
