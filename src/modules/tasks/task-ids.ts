import { randomHex } from '@core/context/random-hex';

/** Resource ids: `<prefix>_` + 24 hex (the reference system's shape). */
export const newId = (prefix: 'task' | 'run' | 'step' | 'artifact' | 'retention' | 'wsop'): string => `${prefix}_${randomHex(12)}`;
