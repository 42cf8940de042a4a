import { scripts } from '../../package.json';
import { checkNode } from './doctor-host';
import { startCommand } from './start';

describe('hecate start runs what the npm scripts run', () => {
  it.each([
    ['all', 'start', 'main.js'],
    ['api', 'start:api', 'main.api.js'],
    ['worker', 'start:worker', 'main.worker.js'],
  ] as const)('--role %s: the node flags of `npm run %s` and its entrypoint beside the CLI', (role, script, file) => {
    const { flags, entry } = startCommand(role);
    expect(scripts[script]).toContain(`node ${flags.join(' ')} dist/src/${file}`);
    expect(flags.length).toBeGreaterThan(0);
    expect(entry.endsWith(`/src/${file}`)).toBe(true);
  });
});

describe('hecate doctor: node', () => {
  it('passes 24, warns on 22 and fails older releases, with the fix', () => {
    expect(checkNode('24.1.0').status).toBe('ok');
    expect(checkNode('22.12.0')).toMatchObject({ status: 'warn', fix: 'install Node.js 24 LTS' });
    expect(checkNode('20.18.0')).toMatchObject({ status: 'fail', detail: expect.stringContaining('>= 22') });
  });
});
