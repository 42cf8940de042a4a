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
