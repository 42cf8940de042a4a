export class PendingMigrationsError extends Error {
  constructor(readonly pending: string[]) {
    super(
      `database has ${pending.length} pending migration(s): ${pending.join(', ')}. ` +
        'Run `npm run migrate` (the Helm pre-upgrade Job does this) or set GATEWAY_MIGRATE_ON_BOOT=true.',
    );
    this.name = 'PendingMigrationsError';
  }
}
