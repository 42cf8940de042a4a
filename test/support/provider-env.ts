/** PROVIDER_<NAME>_* for a fake upstream: the one way suites configure a provider through the environment. */
export function providerEnv(
  name: string,
  upstream: { url: string },
  extra: { key?: string; protocol?: 'openai' | 'anthropic'; kind?: 'local' | 'cloud'; defaultModel?: string } = {},
): Record<string, string> {
  const p = `PROVIDER_${name.toUpperCase()}`;
  const env: Record<string, string> = { [`${p}_BASE_URL`]: `${upstream.url}/v1` };
  if (extra.key) env[`${p}_API_KEY`] = extra.key;
  if (extra.protocol) env[`${p}_PROTOCOL`] = extra.protocol;
  if (extra.kind) env[`${p}_KIND`] = extra.kind;
  if (extra.defaultModel) env[`${p}_DEFAULT_MODEL`] = extra.defaultModel;
  return env;
}
