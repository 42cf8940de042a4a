import { stderrSummary } from './stderr-summary';

describe('stderrSummary', () => {
  it("keeps Node's first error line that a long stack pushes out of the tail, and names the sandbox's read paths", () => {
    const stack = Array.from({ length: 40 }, (_, i) => `    at Module._load (node:internal/modules/cjs/loader:${1000 + i}:12)`).join('\n');
    const stderr = `node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module '/opt/tools/server.js'\nRequire stack:\n${stack}\n`;
    const summary = stderrSummary(stderr);
    expect(summary.startsWith("Error: Cannot find module '/opt/tools/server.js' … ")).toBe(true);
    expect(summary).toContain('GATEWAY_TASK_SANDBOX_READ_PATHS');
    expect(summary.length).toBeLessThan(900);
  });

  it('is the tail alone when the error line is in it, and empty for nothing', () => {
    expect(stderrSummary('boom: TypeError: x is not a function\n')).toBe('boom: TypeError: x is not a function');
    expect(stderrSummary('  \n')).toBe('');
  });
});
