import { ConfigValidationError, loadConfig } from '../config.loader';

describe('tasks config group', () => {
  it('defaults to the seed values', () => {
    const c = loadConfig({}).tasks;
    expect(c.approvalPolicies).toEqual(['shell_exec', 'git_exec', 'file_write']);
    expect(c.leaseSeconds).toBe(30);
    expect(c.reconcileIntervalMs).toBe(30_000);
    expect(c.maxOutputBytes).toBe(4 * 1024 * 1024);
    expect(c.maxConcurrent).toBe(0);
    expect(c.sse.heartbeatMs).toBe(15_000);
  });

  it('expands all_tools, accepts none, and parses durations', () => {
    const c = loadConfig({ GATEWAY_TASK_APPROVAL_POLICIES: 'all_tools', GATEWAY_TASK_RECONCILE_INTERVAL: '1m', GATEWAY_SSE_HEARTBEAT_INTERVAL: '250ms' }).tasks;
    expect(c.approvalPolicies).toEqual(['shell_exec', 'git_exec', 'file_write', 'network_egress', 'read_file']);
    expect(c.reconcileIntervalMs).toBe(60_000);
    expect(c.sse.heartbeatMs).toBe(250);
    expect(loadConfig({ GATEWAY_TASK_APPROVAL_POLICIES: 'none' }).tasks.approvalPolicies).toEqual([]);
    // As the reference system: an empty value disables every gate (the one variable where empty is not "unset").
    expect(loadConfig({ GATEWAY_TASK_APPROVAL_POLICIES: '' }).tasks.approvalPolicies).toEqual([]);
    expect(loadConfig({ GATEWAY_TASK_APPROVAL_POLICIES: ' ' }).tasks.approvalPolicies).toEqual([]);
  });

  it('refuses unknown policy names and bad values, naming the variables', () => {
    let error: ConfigValidationError | undefined;
    try {
      loadConfig({ GATEWAY_TASK_APPROVAL_POLICIES: 'shell_exec,rm_rf', GATEWAY_TASK_QUEUE_LEASE_SECONDS: '0', GATEWAY_TASK_RECONCILE_INTERVAL: 'soon' });
    } catch (err) {
      error = err as ConfigValidationError;
    }
    expect(error?.problems.join('\n')).toMatch(/GATEWAY_TASK_APPROVAL_POLICIES: unknown policy rm_rf/);
    expect(error?.problems.join('\n')).toMatch(/GATEWAY_TASK_QUEUE_LEASE_SECONDS/);
    expect(error?.problems.join('\n')).toMatch(/GATEWAY_TASK_RECONCILE_INTERVAL/);
  });
});

describe('tasks config: MCP client settings', () => {
  it('defaults to the seed values and accepts 0 to disable the ping', () => {
    expect(loadConfig({}).tasks.mcp).toEqual({ maxServersPerTask: 16, cacheMaxEntries: 256, cachePingIntervalMs: 60_000, cachePingTimeoutMs: 5_000 });
    const c = loadConfig({
      GATEWAY_TASK_MAX_MCP_SERVERS_PER_TASK: '0',
      GATEWAY_TASK_MCP_CLIENT_CACHE_MAX_ENTRIES: '8',
      GATEWAY_TASK_MCP_CLIENT_CACHE_PING_INTERVAL: '0',
      GATEWAY_TASK_MCP_CLIENT_CACHE_PING_TIMEOUT: '2s',
    }).tasks.mcp;
    expect(c).toEqual({ maxServersPerTask: 0, cacheMaxEntries: 8, cachePingIntervalMs: 0, cachePingTimeoutMs: 2_000 });
  });
});
