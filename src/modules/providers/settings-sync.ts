import type { BusChannel, EventBus, SettingsChanged, Unsubscribe } from '@core/bus';
import { rootLogger } from '@core/logging/logger';

/**
 * In-memory copies of operator settings (providers, capabilities, prices) stay in sync across processes:
 * a change publishes a doorbell on the EventBus and every process reloads from Postgres (also after a bus
 * reconnect, since messages may have been missed).
 */
export async function reloadOnChange(bus: EventBus, channel: BusChannel<SettingsChanged>, reload: () => Promise<void>): Promise<Unsubscribe> {
  const run = () =>
    void reload().catch((err: unknown) =>
      rootLogger().warn({ channel: channel.name, err: err instanceof Error ? err.message : String(err) }, 'settings reload failed'),
    );
  bus.onReconnect(run);
  return bus.listen(channel, run);
}

export function announceChange(bus: EventBus, channel: BusChannel<SettingsChanged>): Promise<void> {
  // The change is committed; only the other processes' copies are late (until their next reload: a change or a bus reconnect).
  return bus
    .send(channel, { at: Date.now() })
    .catch((err: unknown) =>
      rootLogger().warn({ channel: channel.name, err: err instanceof Error ? err.message : String(err) }, 'settings change not announced'),
    );
}
