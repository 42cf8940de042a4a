import { SetMetadata } from '@nestjs/common';

export const RETENTION_PRUNER_METADATA = 'hecate:retention-pruner';

/** What one pruner reports: what it deleted and the limits it applied (a key of the retention run's `results`). */
export type PruneResult = Record<string, unknown>;

/**
 * Marks a provider method as the retention pruner of one table (or one kind of stored thing): the retention sweep
 * calls it and stores what it returns under `name` in the run's `results`. Declared where the table lives; the
 * retention module finds every one at startup and imports none of the modules that declare them.
 */
export const RetentionPruner = (name: string): MethodDecorator => SetMetadata(RETENTION_PRUNER_METADATA, name);
