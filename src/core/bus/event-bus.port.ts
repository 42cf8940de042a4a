export type BusHandler = (channel: string, message: unknown) => void;
export type Unsubscribe = () => Promise<void>;

/**
 * EventBus port (DESIGN §3, §4.3): a doorbell published after commit. Subscribers must treat it as
 * lossy and refill from Postgres on reconnect or sequence gaps.
 * Patterns use `*` as a wildcard (e.g. `runs.*`).
 */
export abstract class EventBus {
  abstract publish(channel: string, message: unknown): Promise<void>;
  abstract subscribe(pattern: string, handler: BusHandler): Promise<Unsubscribe>;
  /** Called after the bus reconnects; messages may have been missed meanwhile. */
  abstract onReconnect(listener: () => void): () => void;
  abstract close(): Promise<void>;
}

export const patternToRegExp = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
