import { optionFor, taskDispositionOf, taskToolOf, toolKindOf } from './approval-vocabulary';

describe('approval vocabulary', () => {
  it('normalizes ACP tool kinds; MCP tools by name whatever their kind; unknown is other', () => {
    expect(toolKindOf({ kind: 'edit', title: 'Write a.txt' })).toBe('file_write');
    expect(toolKindOf({ kind: 'execute', title: 'Run ls' })).toBe('shell_exec');
    expect(toolKindOf({ kind: 'fetch' })).toBe('network');
    expect(toolKindOf({ kind: 'read' })).toBe('file_read');
    expect(toolKindOf({ kind: 'move' })).toBe('file_move');
    expect(toolKindOf({ kind: 'delete' })).toBe('file_delete');
    expect(toolKindOf({ kind: 'switch_mode' })).toBe('other');
    expect(toolKindOf({})).toBe('other');
    expect(toolKindOf({ kind: 'other', title: 'mcp__github__create_issue' })).toBe('mcp');
    expect(toolKindOf({ kind: 'execute', title: 'Create issue', _meta: { claudeCode: { toolName: 'mcp__github__create_issue' } } })).toBe('mcp');
  });

  const options = [
    { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
    { optionId: 'always', name: 'Always', kind: 'allow_always' },
    { optionId: 'no', name: 'Reject', kind: 'reject_once' },
  ];

  it('picks the option of the decision: the selected one when it fits, else once, else always; null when none fits', () => {
    expect(optionFor(options, 'approve')?.optionId).toBe('allow');
    expect(optionFor(options, 'approve', 'always')?.optionId).toBe('always');
    expect(optionFor(options, 'deny')?.optionId).toBe('no');
    expect(optionFor(options, 'deny', 'allow')).toBeNull();
    expect(optionFor(options, 'approve', 'nope')).toBeNull();
    expect(optionFor([options[1]], 'approve')?.optionId).toBe('always');
    expect(optionFor([options[0]], 'deny')).toBeNull();
  });

  it("a task approval in the session stream's vocabulary: its first gated tool's kind, the tools it names, rejected as denied", () => {
    const calls = (...names: string[]) => ({ tool_calls: names.map((name, i) => ({ id: `c${i}`, name, arguments: '{}' })) });
    expect(taskToolOf('agent_loop_tool_call', calls('shell_exec', 'file_write', 'shell_exec'))).toEqual({
      tool_kind: 'shell_exec',
      tool_name: 'shell_exec, file_write',
    });
    expect(taskToolOf('agent_loop_tool_call', calls('http_request')).tool_kind).toBe('network');
    expect(taskToolOf('agent_loop_tool_call', calls('mcp__github__create_issue')).tool_kind).toBe('mcp');
    expect(taskToolOf('agent_loop_tool_call', calls('something_new')).tool_kind).toBe('other');
    expect(taskToolOf('shell_command', { argv: ['ls'] })).toEqual({ tool_kind: 'shell_exec', tool_name: 'shell_command' });
    expect(taskDispositionOf('approved')).toEqual({ status: 'approved', decision: 'approve', path: 'operator' });
    expect(taskDispositionOf('rejected')).toEqual({ status: 'denied', decision: 'deny', path: 'operator' });
    expect(taskDispositionOf('cancelled')).toEqual({ status: 'cancelled', decision: null, path: 'request_cancelled' });
  });
});
