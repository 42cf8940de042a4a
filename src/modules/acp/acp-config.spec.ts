import { acpConfig, AcpConfigError } from './acp-config';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    acpConfig(env);
    return [];
  } catch (err) {
    return (err as AcpConfigError).problems;
  }
};

describe('acpConfig', () => {
  it('names every bad variable', () => {
    expect(() => acpConfig({})).toThrow(/HECATE_BASE_URL is required/);
    expect(problemsOf({ HECATE_BASE_URL: 'ftp://x', HECATE_ACP_LOG_LEVEL: 'loud' })).toEqual([
      'HECATE_BASE_URL must be an http or https URL',
      expect.stringContaining('HECATE_ACP_LOG_LEVEL must be one of'),
    ]);
    expect(() => acpConfig({ HECATE_BASE_URL: 'http://user:pw@h' })).toThrow(/must not embed credentials/);
  });

  it('a base URL without its trailing slash; optional key, model and provider', () => {
    expect(acpConfig({ HECATE_BASE_URL: 'http://127.0.0.1:8765/', HECATE_API_KEY: ' hk_x ', HECATE_MODEL: 'gpt-4o-mini' })).toEqual({
      baseUrl: 'http://127.0.0.1:8765',
      apiKey: 'hk_x',
      model: 'gpt-4o-mini',
      provider: undefined,
      logLevel: 'info',
    });
  });
});
