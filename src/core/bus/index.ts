export * from './channels';
export { channelDoorbell, type Doorbell } from './doorbell';
export { EventBus, patternToRegExp, type BusHandler, type Unsubscribe } from './event-bus.port';
export { InProcessEventBus } from './in-process-event-bus.adapter';
export { RedisEventBus } from './redis-event-bus.adapter';
export { busRequest, type BusRequest } from './request-reply';
export { BusCancels } from './cancel-registry';
