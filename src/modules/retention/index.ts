/** The retention module's public face: the sweep, its routes, and the decorator a module declares its pruners with. */
export { RetentionController } from './retention.controller';
export { RetentionModule } from './retention.module';
export { type PruneResult, RetentionPruner } from './retention-pruner.decorator';
export { RetentionService } from './retention.service';
