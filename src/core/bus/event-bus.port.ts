import type { BusChannel } from './channels';

export type BusHandler = (channel: string, message: unknown) => void;
export type Unsubscribe = () => Promise<void>;

/**
 * EventBus port (docs/design.md §3, §4.3): a doorbell published after commit. Subscribers must treat it as
 * lossy and refill from Postgres on reconnect or sequence gaps.
 * Patterns use `*` as a wildcard (e.g. `runs.*`).
 */
export abstract class EventBus {
  abstract publish(channel: string, message: unknown): Promise<void>;
  abstract subscribe(pattern: string, handler: BusHandler): Promise<Unsubscribe>;
  /** Called after the bus reconnects; messages may have been missed meanwhile. */
  abstract onReconnect(listener: () => void): () => void;
  abstract close(): Promise<void>;

  /** Publishes on a channel of the registry (channels.ts), its payload type-checked. */
  send<P>(channel: BusChannel<P>, payload: P): Promise<void> {
    return this.publish(channel.name, payload);
  }

  /** Subscribes to a channel of the registry, or a family's `all`; the handler gets the payload and the channel's name. */
  listen<P>(channel: BusChannel<P>, handler: (payload: P, channel: string) => void): Promise<Unsubscribe> {
    return this.subscribe(channel.name, (name, message) => handler(message as P, name));
  }
}

export const patternToRegExp = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
