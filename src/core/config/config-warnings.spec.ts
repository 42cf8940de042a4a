import { loadConfig } from './config.loader';
import { editDistance } from './config-warnings';

const warningsOf = (env: Record<string, string>) =>
  loadConfig(env).warnings.map(({ variable, did_you_mean, replaced_by }) => ({ variable, did_you_mean, replaced_by }));

describe('configuration warnings', () => {
  it('names the nearest known variable for a misspelt GATEWAY_* one, from the loader’s own groups', () => {
    expect(warningsOf({ GATEWAY_TASK_MAX_CONCURENT: '4', GATEWAY_RATE_LIMT_RPM: '9', GATEWAY_PORT: '1' })).toEqual([
      { variable: 'GATEWAY_PORT', did_you_mean: 'PORT', replaced_by: undefined },
      { variable: 'GATEWAY_RATE_LIMT_RPM', did_you_mean: 'GATEWAY_RATE_LIMIT_RPM', replaced_by: undefined },
      { variable: 'GATEWAY_TASK_MAX_CONCURENT', did_you_mean: 'GATEWAY_TASK_MAX_CONCURRENT', replaced_by: undefined },
    ]);
  });

  it('warns about an unknown GATEWAY_* variable with nothing close, without a suggestion', () => {
    expect(warningsOf({ GATEWAY_SOMETHING_ELSE_ENTIRELY: 'x' })).toEqual([
      { variable: 'GATEWAY_SOMETHING_ELSE_ENTIRELY', did_you_mean: undefined, replaced_by: undefined },
    ]);
  });

  it('knows every declared variable, secret *_FILE forms and the operator’s HECATE_MCP_SECRET_* names', () => {
    expect(
      warningsOf({
        GATEWAY_TASK_MAX_CONCURRENT: '2',
        GATEWAY_AGENT_ADAPTERS_DIR: '/tmp/a',
        GATEWAY_MCP_SECRET_ENV_ALLOW: 'X',
        HECATE_MCP_SECRET_GITHUB: 'tok',
        HECATE_BASE_URL: 'http://x',
        HECATE_API_KEY: 'hk_x',
      }),
    ).toEqual([]);
  });

  it('flags a HECATE_* variable only when it is close to a known name (the prefix is shared with other tools)', () => {
    expect(warningsOf({ HECATE_AGENT_ADAPTER_DIR: '/x', HECATE_TASK_MAX_CONCURRENT: '3', HECATE_DIST: 'dist' })).toEqual([
      { variable: 'HECATE_AGENT_ADAPTER_DIR', did_you_mean: 'HECATE_AGENT_ADAPTERS_DIR', replaced_by: undefined },
      { variable: 'HECATE_TASK_MAX_CONCURRENT', did_you_mean: 'GATEWAY_TASK_MAX_CONCURRENT', replaced_by: undefined },
    ]);
  });

  it('says what replaces each seed variable that has no meaning here', () => {
    const w = warningsOf({
      GATEWAY_TASKS_BACKEND: 'sqlite',
      GATEWAY_TASK_QUEUE_BACKEND: 'memory',
      GATEWAY_CHAT_SESSIONS_BACKEND: 'sqlite',
      GATEWAY_TASK_QUEUE_BUFFER: '64',
    });
    expect(w.map((x) => x.variable)).toEqual([
      'GATEWAY_CHAT_SESSIONS_BACKEND',
      'GATEWAY_TASKS_BACKEND',
      'GATEWAY_TASK_QUEUE_BACKEND',
      'GATEWAY_TASK_QUEUE_BUFFER',
    ]);
    expect(w.find((x) => x.variable === 'GATEWAY_TASK_QUEUE_BACKEND')?.replaced_by).toMatch(/REDIS_URL/);
    expect(w.find((x) => x.variable === 'GATEWAY_TASK_QUEUE_BUFFER')?.replaced_by).toMatch(/GATEWAY_TASK_QUEUE_WORKERS/);
    expect(warningsOf({ SAGE_TOOL_PROGRESS_ENABLED: 'false' })).toEqual([
      { variable: 'SAGE_TOOL_PROGRESS_ENABLED', did_you_mean: undefined, replaced_by: expect.stringMatching(/^GATEWAY_TOOL_PROGRESS_ENABLED /) },
    ]);
  });

  it('never carries a value', () => {
    const all = JSON.stringify(loadConfig({ GATEWAY_TASK_MAX_CONCURENT: 'value-abc-123', GATEWAY_TASKS_BACKEND: 'value-def-456' }).warnings);
    expect(all).not.toMatch(/value-abc-123|value-def-456/);
  });

  it('reads the seed name HECATE_AGENT_ADAPTERS_DIR as the adapters directory; two different directories are refused', () => {
    expect(loadConfig({ HECATE_AGENT_ADAPTERS_DIR: '/srv/adapters' }).agent.adapters.dir).toBe('/srv/adapters');
    expect(loadConfig({ HECATE_AGENT_ADAPTERS_DIR: '/srv/a', GATEWAY_AGENT_ADAPTERS_DIR: '/srv/a/' }).agent.adapters.dir).toBe('/srv/a/');
    expect(() => loadConfig({ HECATE_AGENT_ADAPTERS_DIR: '/srv/a', GATEWAY_AGENT_ADAPTERS_DIR: '/srv/b' })).toThrow(
      /HECATE_AGENT_ADAPTERS_DIR: GATEWAY_AGENT_ADAPTERS_DIR names another/,
    );
  });

  it.each([
    ['abc', 'abc', 0],
    ['abc', 'acb', 1],
    ['CONCURENT', 'CONCURRENT', 1],
    ['', 'ab', 2],
  ])('editDistance(%p, %p) = %d', (a, b, d) => expect(editDistance(a, b)).toBe(d));
});
