import { firstVersion, parseOperatorAdapters, satisfies } from './adapter-definitions';

describe('adapter definitions', () => {
  it('reads the first semver token of --version output', () => {
    expect(firstVersion('codex-acp 0.16.0 (abc1234)\n')).toBe('0.16.0');
    expect(firstVersion('0.101.0\n')).toBe('0.101.0');
    expect(firstVersion('v2.3.4-beta.1')).toBe('2.3.4');
    expect(firstVersion('no version here')).toBeUndefined();
  });

  it('checks versions against ranges (>=, <, ^, ~, conjunctions); unknown when either side is missing', () => {
    expect(satisfies('0.16.0', '>=0.9.0 <1.0.0')).toBe(true);
    expect(satisfies('1.0.0', '>=0.9.0 <1.0.0')).toBe(false);
    expect(satisfies('1.4.2', '^1.2.0')).toBe(true);
    expect(satisfies('2.0.0', '^1.2.0')).toBe(false);
    expect(satisfies('0.3.9', '^0.3.1')).toBe(true);
    expect(satisfies('0.4.0', '^0.3.1')).toBe(false);
    expect(satisfies('1.2.9', '~1.2.0')).toBe(true);
    expect(satisfies('1.3.0', '~1.2.0')).toBe(false);
    expect(satisfies('1.0.0', '=1.0.0')).toBe(true);
    expect(satisfies(undefined, '>=1.0.0')).toBeUndefined();
    expect(satisfies('1.0.0', '')).toBeUndefined();
    expect(satisfies('1.0.0', 'banana')).toBeUndefined();
    // A prerelease tag or a short version is read as its release, as before; npm's range syntax is accepted whole.
    expect(satisfies('2.3.4-beta.1', '>=2.3.4 <3')).toBe(true);
    expect(satisfies('2', '>=2.0.0')).toBe(true);
    expect(satisfies('2.5.0', '1.x || >=2.4.0 <3')).toBe(true);
    expect(satisfies('2.1.0', '1.x || >=2.4.0 <3')).toBe(false);
  });

  it('parses operator-defined adapters and names every problem at once', () => {
    expect(parseOperatorAdapters('')).toEqual([]);
    const [a] = parseOperatorAdapters(
      JSON.stringify([{ id: 'mine', command: '/opt/mine/bin/acp', args: ['--acp'], env: ['MINE_KEY'], supported_range: '>=1.0.0' }]),
    );
    expect(a).toMatchObject({
      id: 'mine',
      name: 'mine',
      kind: 'acp',
      command: '/opt/mine/bin/acp',
      args: ['--acp'],
      envAllowlist: ['MINE_KEY'],
      managed: false,
      builtIn: false,
    });
    expect(() => parseOperatorAdapters('{')).toThrow(/not JSON/);
    expect(() => parseOperatorAdapters('{}')).toThrow(/JSON array/);
    let message = '';
    try {
      parseOperatorAdapters(
        JSON.stringify([{ id: 'codex', command: 'x' }, { id: 'Bad Id' }, { id: 'ok', command: 'y', args: 'nope', supported_range: 'banana' }]),
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('GATEWAY_AGENT_ADAPTERS[0].id "codex" is already defined');
    expect(message).toContain('GATEWAY_AGENT_ADAPTERS[1].id must match');
    expect(message).toContain('GATEWAY_AGENT_ADAPTERS[1].command is required');
    expect(message).toContain('GATEWAY_AGENT_ADAPTERS[2].args must be an array of strings');
    expect(message).toContain('GATEWAY_AGENT_ADAPTERS[2].supported_range is not a version range');
    expect(() => parseOperatorAdapters(JSON.stringify([{ id: 'blank', command: 'x', supported_range: '  ' }]))).toThrow(
      'GATEWAY_AGENT_ADAPTERS[0].supported_range is not a version range',
    );
  });
});
