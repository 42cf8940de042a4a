import { BusHandler, EventBus, patternToRegExp, Unsubscribe } from './event-bus.port';

/** EventBus for embedded mode: delivery within this process, asynchronously (never inside the publisher). */
export class InProcessEventBus extends EventBus {
  private readonly subs = new Set<{ re: RegExp; handler: BusHandler }>();

  async publish(channel: string, message: unknown): Promise<void> {
    const matched = [...this.subs].filter((s) => s.re.test(channel));
    if (matched.length === 0) return;
    // Same structured-clone semantics as the Redis adapter: subscribers never share the publisher's object.
    const json = JSON.stringify(message);
    queueMicrotask(() => {
      for (const s of matched) s.handler(channel, JSON.parse(json) as unknown);
    });
  }

  async subscribe(pattern: string, handler: BusHandler): Promise<Unsubscribe> {
    const sub = { re: patternToRegExp(pattern), handler };
    this.subs.add(sub);
    return async () => {
      this.subs.delete(sub);
    };
  }

  onReconnect(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.subs.clear();
  }
}
