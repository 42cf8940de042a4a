import { limitArgv, limitHint, limitsFor, prlimitAvailable } from './sandbox-limits';

const config = { maxProcesses: 100, maxMemoryBytes: 2 ** 31, maxFileBytes: 2 ** 30, tmpBytes: 2 ** 29 };

describe('sandbox limits', () => {
  it('counts processes only for the dedicated sandbox uid (RLIMIT_NPROC is per uid)', () => {
    expect(limitsFor(config, 65534, 65534).processes).toBe(100);
    expect(limitsFor(config, 1000, 65534).processes).toBe(0);
    expect(limitsFor(config, null, 65534).processes).toBe(0);
    expect(limitsFor(config, null, 65534)).toMatchObject({ memoryBytes: 2 ** 31, fileBytes: 2 ** 30 });
  });

  it('builds the prlimit prefix (only the limits that are set)', () => {
    expect(prlimitAvailable()).toBe(true); // util-linux, beside setpriv
    expect(limitArgv(limitsFor(config, 65534, 65534))).toEqual(['prlimit', '--core=0', '--nproc=100', `--data=${2 ** 31}`, `--fsize=${2 ** 30}`, '--']);
    expect(limitArgv({ processes: 0, memoryBytes: 0, fileBytes: 0 })).toEqual(['prlimit', '--core=0', '--']);
  });

  it('names the limit an exit probably hit', () => {
    expect(limitHint(153, null, '')).toContain('GATEWAY_TASK_SANDBOX_MAX_FILE_BYTES');
    expect(limitHint(2, null, 'sh: 1: Cannot fork')).toContain('GATEWAY_TASK_SANDBOX_MAX_PROCESSES');
    expect(limitHint(1, null, 'RangeError: Failed to allocate memory')).toContain('GATEWAY_TASK_SANDBOX_MAX_MEMORY_BYTES');
    expect(limitHint(2, null, 'sort: memory exhausted')).toContain('GATEWAY_TASK_SANDBOX_MAX_MEMORY_BYTES');
    expect(limitHint(1, null, 'no such file')).toBe('');
  });
});
