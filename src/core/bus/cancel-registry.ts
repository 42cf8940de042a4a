import { rootLogger } from '@core/logging/logger';
import type { BusChannelFamily } from './channels';
import type { EventBus, Unsubscribe } from './event-bus.port';

/**
 * Cross-process cancel of one kind of work (task runs, Agent Chat turns, chat generations): the process running an item
 * registers what to do when it is cancelled; a cancel from any process is a message on one channel of the family. One
 * pattern subscription per kind, opened at the first `listen`/`register` and closed by `close`. The bus is lossy: the
 * holder's lease heartbeat stays the fallback.
 */
export class BusCancels<P> {
  private readonly local = new Map<string, () => void>();
  private subscription: Promise<Unsubscribe> | undefined;

  /**
   * `keyOf` names the registered item a message cancels; by default the id in the channel's name (`runs.cancel.<id>`).
   * Return undefined to ignore a message.
   */
  constructor(
    private readonly bus: EventBus,
    private readonly family: BusChannelFamily<P>,
    private readonly keyOf: (payload: P, channelId: string) => string | undefined = (_payload, channelId) => channelId,
  ) {}

  /** Items registered here now. */
  get size(): number {
    return this.local.size;
  }

  /** Subscribes (once); resolves when cancels from other processes can arrive. */
  async listen(): Promise<void> {
    this.subscription ??= this.bus.listen(this.family.all, (payload, channel) => {
      const key = this.keyOf(payload, this.family.idOf(channel));
      if (key !== undefined) this.local.get(key)?.();
    });
    try {
      await this.subscription;
    } catch (err) {
      this.subscription = undefined;
      throw err;
    }
  }

  /** `onCancel` runs when a cancel for `key` arrives; the returned function unregisters (a later holder of the key stays). */
  register(key: string, onCancel: () => void): () => void {
    this.listen().catch((err: unknown) => rootLogger().warn({ channel: this.family.all.name, err: String(err) }, 'cancel subscription failed'));
    const entry = () => onCancel();
    this.local.set(key, entry);
    return () => {
      if (this.local.get(key) === entry) this.local.delete(key);
    };
  }

  /** Runs the cancel of an item registered in this process, without the bus; false when none is. */
  cancelHere(key: string): boolean {
    const onCancel = this.local.get(key);
    onCancel?.();
    return onCancel !== undefined;
  }

  /** Rings the cancel on the family's channel `channelId` (the process holding the item acts on it). */
  cancel(channelId: string, payload: P): Promise<void> {
    return this.bus.send(this.family.of(channelId), payload);
  }

  /** Unsubscribes; registered items are left to their holders. */
  async close(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    // A failed subscription was reported by listen(); then there is nothing to unsubscribe.
    const unsubscribe = await subscription?.catch(() => undefined);
    // The buses' unsubscribe already absorbs a lost connection.
    await unsubscribe?.().catch(() => undefined);
  }
}
