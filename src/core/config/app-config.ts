import type { AppConfigValues } from './config.loader';

/** Injection token and type for the validated configuration (class + interface merge). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export abstract class AppConfig {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface AppConfig extends AppConfigValues {}
