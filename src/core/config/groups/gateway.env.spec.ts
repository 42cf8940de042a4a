import 'reflect-metadata';
import { checkGatewayEnv, envProviders, gatewayConfig, GatewayEnv } from './gateway.env';

describe('gateway env', () => {
  it('groups PROVIDER_<NAME>_* variables by lower-cased name', () => {
    const specs = envProviders({
      PROVIDER_OPENAI_API_KEY: 'sk-1',
      PROVIDER_MY_LLM_BASE_URL: 'http://10.0.0.2:8000/v1/',
      PROVIDER_MY_LLM_PROTOCOL: 'anthropic',
      PROVIDER_MY_LLM_KIND: 'local',
      PROVIDER_OLLAMA_DEFAULT_MODEL: 'qwen2.5',
      UNRELATED: 'x',
    });
    expect(specs).toEqual([
      { name: 'my_llm', baseUrl: 'http://10.0.0.2:8000/v1', protocol: 'anthropic', kind: 'local' },
      { name: 'ollama', defaultModel: 'qwen2.5' },
      { name: 'openai', apiKey: 'sk-1' },
    ]);
  });

  it('names the bad variable', () => {
    const env = Object.assign(new GatewayEnv(), {
      PROVIDER_X_PROTOCOL: 'grpc',
      PROVIDER_Y_BASE_URL: 'https://user:pw@example.com/v1',
    });
    expect(checkGatewayEnv(env)).toEqual([
      'PROVIDER_X_PROTOCOL: must be openai or anthropic',
      'PROVIDER_Y_BASE_URL: must not embed credentials; use PROVIDER_Y_API_KEY',
    ]);
  });

  it('turns the rate limiter on when an RPM is set', () => {
    expect(gatewayConfig(new GatewayEnv()).rateLimit.enabled).toBe(false);
    const c = gatewayConfig(Object.assign(new GatewayEnv(), { GATEWAY_RATE_LIMIT_RPM: 120 }));
    expect(c.rateLimit).toEqual({ enabled: true, rpm: 120, burst: 120 });
  });
});
