import { randomBytes } from 'node:crypto';

/** Resource ids: `<prefix>_` + 24 hex (the reference system's shape). */
export const newId = (prefix: 'task' | 'run' | 'step' | 'artifact' | 'retention'): string => `${prefix}_${randomBytes(12).toString('hex')}`;
