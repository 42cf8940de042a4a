import { rebindingProblem } from './loopback-origin';

describe('rebindingProblem', () => {
  it('accepts loopback hosts with or without a port, and loopback origins', () => {
    for (const host of ['127.0.0.1:8765', 'localhost', 'LOCALHOST:1', '[::1]:8765', '127.1.2.3']) expect(rebindingProblem({ host })).toBeUndefined();
    expect(rebindingProblem({ host: '127.0.0.1:8765', origin: 'http://localhost:6274' })).toBeUndefined();
    expect(rebindingProblem({ host: 'localhost', origin: 'http://[::1]:3000' })).toBeUndefined();
  });

  it('refuses another host name, a missing host, and a foreign or opaque origin', () => {
    expect(rebindingProblem({ host: 'evil.example.com' })).toMatch(/not a loopback address/);
    expect(rebindingProblem({ host: 'evil.example.com:8765' })).toMatch(/not a loopback address/);
    expect(rebindingProblem({})).toMatch(/not a loopback address/);
    expect(rebindingProblem({ host: '127.0.0.1.evil.example.com' })).toMatch(/not a loopback address/);
    expect(rebindingProblem({ host: '127.0.0.1:8765', origin: 'http://evil.example.com' })).toMatch(/not a loopback origin/);
    expect(rebindingProblem({ host: '127.0.0.1:8765', origin: 'null' })).toMatch(/not a loopback origin/);
  });
});
