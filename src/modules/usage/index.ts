/** The usage module's public face: other modules and the composition root import `@modules/usage`, never its files. */
export { TraceStoreService } from './trace-store.service';
export type { GatewayTrace, TraceAttempt, TraceCandidate } from './trace-store.service';
export { TracesController } from './traces.controller';
export { UsageLedgerService } from './usage-ledger.service';
export { UsageController } from './usage.controller';
export { UsageModule } from './usage.module';
