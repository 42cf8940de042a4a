import 'reflect-metadata';
import { type DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Declarations } from '@core/discovery/declarations';
import { MetricsService } from '@core/metrics/metrics.service';
import { InProcessRunQueue } from '@core/queue/in-process-run-queue.adapter';
import { AdapterProcessesGauge, Liveness, McpCacheGauge, PendingApprovalsGauge, SystemStat } from './system-info.decorator';
import { SystemInfoRegistry } from './system-info.registry';

class Shallow {
  @SystemStat('shallow')
  stats() {
    return { n: 1 };
  }
}

class Deep {
  constructor(private readonly pending: number) {}

  @SystemStat('deep')
  async stats() {
    return Promise.resolve('deep value');
  }

  @Liveness('deep_fact')
  fact() {
    return { ok: true };
  }

  @PendingApprovalsGauge('task')
  countPending() {
    return Promise.resolve(this.pending);
  }
}

class AlsoShallow {
  @SystemStat('also_shallow')
  stats() {
    return 3;
  }

  @PendingApprovalsGauge('agent_chat')
  countPending() {
    return Promise.resolve(2);
  }
}

/** A worker's MCP client cache and adapter processes, as McpCacheReporter and AdapterSessionHost declare them. */
class WorkerGauges {
  readonly live = new Map([['codex', 2]]);

  @McpCacheGauge()
  cacheEntries() {
    return { inUse: 1, idle: 3 };
  }

  @AdapterProcessesGauge()
  adapterProcesses() {
    return { running: this.live, known: ['codex', 'claude_code'] };
  }
}

class SecondShallow {
  @SystemStat('shallow')
  stats() {
    return 'again';
  }
}

describe('SystemInfoRegistry', () => {
  let queue: InProcessRunQueue;
  let metrics: MetricsService;
  beforeEach(() => {
    queue = new InProcessRunQueue();
    metrics = new MetricsService(queue);
  });
  afterEach(() => queue.close());

  /** Providers as Nest hands them out, each with the depth of the module that provides it. */
  const registryOf = (...wrappers: Array<[instance: unknown, depth: number]>): SystemInfoRegistry => {
    const discovery = { getProviders: () => wrappers.map(([instance, depth]) => ({ instance, host: { distance: depth } })) } as unknown as DiscoveryService;
    const registry = new SystemInfoRegistry(new Declarations(discovery, new MetadataScanner(), new Reflector()), metrics);
    registry.onModuleInit();
    return registry;
  };

  it('serves every @SystemStat and @Liveness field in Nest init order: the deepest module first, provider order among equals', async () => {
    const registry = registryOf([new Shallow(), 2], [new Deep(4), 5], [new AlsoShallow(), 2]);
    expect(JSON.stringify(await registry.statsFields())).toBe(JSON.stringify({ deep: 'deep value', shallow: { n: 1 }, also_shallow: 3 }));
    expect(registry.livenessFields()).toEqual({ deep_fact: { ok: true } });
  });

  it('reads the fields at each call', async () => {
    let n = 0;
    class Counting {
      @SystemStat('count')
      count() {
        return ++n;
      }
    }
    const registry = registryOf([new Counting(), 1]);
    expect(await registry.statsFields()).toEqual({ count: 1 });
    expect(await registry.statsFields()).toEqual({ count: 2 });
  });

  it('wires each @PendingApprovalsGauge into the scrape', async () => {
    registryOf([new Deep(4), 5], [new AlsoShallow(), 2]);
    const body = (await metrics.render()).body;
    expect(body).toContain('hecate_approvals_pending{kind="task"} 4');
    expect(body).toContain('hecate_approvals_pending{kind="agent_chat"} 2');
  });

  it('wires @McpCacheGauge and @AdapterProcessesGauge into the scrape, read at each scrape', async () => {
    const gauges = new WorkerGauges();
    registryOf([gauges, 3]);
    let body = (await metrics.render()).body;
    expect(body).toContain('hecate_mcp_cache_entries{state="in_use"} 1\nhecate_mcp_cache_entries{state="idle"} 3');
    expect(body).toContain('hecate_adapter_processes{adapter="codex"} 2\nhecate_adapter_processes{adapter="claude_code"} 0');
    gauges.live.clear();
    body = (await metrics.render()).body;
    expect(body).toContain('hecate_adapter_processes{adapter="codex"} 0');
  });

  it('a process without those providers (the api) shows neither gauge', async () => {
    registryOf([new Shallow(), 1]);
    const body = (await metrics.render()).body;
    expect(body).not.toMatch(/^hecate_mcp_cache_entries\{/m);
    expect(body).not.toMatch(/^hecate_adapter_processes\{/m);
  });

  it('a key declared twice is a boot error naming both methods', () => {
    expect(() => registryOf([new Shallow(), 2], [new SecondShallow(), 3])).toThrow(
      'system stat "shallow" is declared twice: Shallow.stats, SecondShallow.stats',
    );
    expect(() => registryOf([new Deep(1), 2], [new Deep(2), 3])).toThrow('liveness field "deep_fact" is declared twice: Deep.fact, Deep.fact');
    expect(() => registryOf([new WorkerGauges(), 2], [new WorkerGauges(), 3])).toThrow(
      'MCP cache gauge "mcp_cache" is declared twice: WorkerGauges.cacheEntries, WorkerGauges.cacheEntries',
    );
  });
});
