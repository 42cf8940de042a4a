/** The events module's public face: other modules and the composition root import `@modules/events`, never its files. */
export { parseCursor } from './event-cursor';
export { TERMINAL_RUN_EVENTS } from './event-envelope';
export { EventStore, EventTx } from './event-store.service';
export type { AppendedEvent, CommitListener } from './event-store.service';
export type { SqlFragment } from './event-store.repository';
export { EventStreams } from './event-streams.service';
export { EventsController } from './events.controller';
export { EventEnvelopeDto } from './events.dto';
export { EventsModule } from './events.module';
export { replayThenTail } from './replay-tail';
