import type { AppConfigValues } from './config.loader';

/** Injection token and type for the validated configuration (class + interface merge). */
export abstract class AppConfig {}
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface AppConfig extends AppConfigValues {}
