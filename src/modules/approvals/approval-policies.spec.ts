import { preExecutionGate, toolRequiresApproval } from './approval-policies';

describe('approval policies', () => {
  const defaults = ['shell_exec', 'git_exec', 'file_write'] as const;

  it('gates shell, git and file runs with the seed approval kinds', () => {
    expect(preExecutionGate(defaults, 'shell', false)).toEqual({ kind: 'shell_command', policies: ['shell_exec'] });
    expect(preExecutionGate(defaults, 'git', false)).toEqual({ kind: 'git_exec', policies: ['git_exec'] });
    expect(preExecutionGate(defaults, 'file', false)).toEqual({ kind: 'file_write', policies: ['file_write'] });
    expect(preExecutionGate(defaults, 'shell', true)?.kind).toBe('shell_command');
  });

  it('gates network egress only when its policy is active', () => {
    expect(preExecutionGate(['network_egress'], 'shell', true)).toEqual({ kind: 'network_egress', policies: ['network_egress'] });
    expect(preExecutionGate(['network_egress'], 'shell', false)).toBeNull();
    expect(preExecutionGate([], 'shell', true)).toBeNull();
  });

  it('maps agent tools to their policies', () => {
    expect(toolRequiresApproval(defaults, 'shell_exec')).toBe(true);
    expect(toolRequiresApproval(defaults, 'read_file')).toBe(false);
    expect(toolRequiresApproval(['read_file'], 'read_file')).toBe(true);
    expect(toolRequiresApproval(defaults, 'unknown_tool')).toBe(false);
  });
});
