import { ConfigValidationError, loadConfig } from '@core/config/config.loader';
import type { AppConfig } from '@core/config/app-config';
import { egressSettings } from './egress-proxy';

const settings = (env: Record<string, string>) => egressSettings(loadConfig(env) as AppConfig);

describe('sandbox egress settings', () => {
  it('embedded: the API and health ports are reserved on local addresses; the gateway is this server on loopback', () => {
    const s = settings({ PORT: '9100', WORKER_HEALTH_PORT: '9101' });
    expect(s.reservedLocalPorts).toEqual([9100, 9101]);
    expect(s.reservedEndpoints).toEqual([]);
    expect(s.gateway).toEqual({ host: '127.0.0.1', port: 9100, local: true });
    expect(s.outbound).toMatchObject({ allowPrivate: false, selfPort: 9100 });
  });

  it("scaled: Postgres and Redis (by name and port) are reserved with the operator's deny list; no gateway unless configured", () => {
    const s = settings({
      DATABASE_URL: 'postgres://u:secret@db.internal:6543/hecate',
      REDIS_URL: 'redis://:pw@[::1]:6380/0',
      GATEWAY_TASK_SANDBOX_EGRESS_DENY: 'API.internal:8765,[fd00::5]:80',
    });
    expect(s.reservedLocalPorts).toEqual([8765, 8766, 6543, 6380]);
    expect(s.reservedEndpoints).toEqual([
      { host: 'db.internal', port: 6543 },
      { host: '::1', port: 6380 },
      { host: 'api.internal', port: 8765 },
      { host: 'fd00::5', port: 80 },
    ]);
    expect(s.gateway).toBeNull();
    expect(JSON.stringify(s)).not.toContain('secret');
  });

  it('a configured http gateway URL is the gateway (and refused to tunnels); a loopback one is forwarded inside the sandbox', () => {
    const remote = settings({ DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r', GATEWAY_AGENT_ADAPTER_GATEWAY_URL: 'http://hecate-api:8765' });
    expect(remote.gateway).toEqual({ host: 'hecate-api', port: 8765, local: false });
    expect(remote.reservedEndpoints).toContainEqual({ host: 'hecate-api', port: 8765 });
    expect(settings({ GATEWAY_AGENT_ADAPTER_GATEWAY_URL: 'http://127.0.0.1:9000' }).gateway).toEqual({ host: '127.0.0.1', port: 9000, local: true });
  });

  it('refuses a deny entry that is not host:port', () => {
    let error: ConfigValidationError | undefined;
    try {
      loadConfig({ GATEWAY_TASK_SANDBOX_EGRESS_DENY: '10.0.0.1,db:5432' });
    } catch (err) {
      error = err as ConfigValidationError;
    }
    expect(error?.problems.join('\n')).toMatch(/GATEWAY_TASK_SANDBOX_EGRESS_DENY: entries must be host:port.*10\.0\.0\.1$/m);
  });
});
