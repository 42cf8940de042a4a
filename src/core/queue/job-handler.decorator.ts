import { SetMetadata } from '@nestjs/common';
import type { JobName } from '@contracts/jobs';

export const JOB_HANDLER_METADATA = 'hecate:job-handler';

/** Marks a method of a `*.job.ts` provider as the handler of one job name (docs/style.md rule 3–4). */
export const JobHandler = (name: JobName): MethodDecorator => SetMetadata(JOB_HANDLER_METADATA, name);
