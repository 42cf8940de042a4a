import { getMetadataStorage } from 'class-validator';
import { chatTools } from './chat-tools';
import { listing, type McpTool } from './mcp-tool';
import { taskTools } from './task-tools';

const none = {} as never;
const tools: McpTool[] = [...taskTools(none, none, none), ...chatTools(none, none, none)];

/** The properties the tool's argument class accepts (the validation pipe refuses any other). */
const accepted = (cls: new () => object): string[] =>
  [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(cls, '', true, false)
        .map((m) => m.propertyName),
    ),
  ].sort();

describe('MCP tools', () => {
  it('are the issue’s eleven, each with a description, an input schema and an output schema of type object', () => {
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'cancel_run',
        'create_task',
        'get_chat_session',
        'get_run',
        'list_chat_sessions',
        'list_pending_approvals',
        'list_run_events',
        'list_tasks',
        'resolve_approval',
        'send_agent_chat_message',
        'start_task',
      ].sort(),
    );
    for (const t of listing(tools)) {
      expect(t.description).toBeTruthy();
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(Object.keys(t.outputSchema?.properties ?? {}).length).toBeGreaterThan(0);
    }
  });

  it('advertise exactly the arguments their DTO accepts (send_agent_chat_message leaves out the HTTP-only `stream`)', () => {
    for (const t of tools) {
      const advertised = Object.keys(t.input).sort();
      const dto = accepted(t.args).filter((p) => !(t.name === 'send_agent_chat_message' && p === 'stream'));
      expect({ tool: t.name, advertised }).toEqual({ tool: t.name, advertised: dto });
    }
  });

  it('mark reads read-only and cancel and resolve destructive', () => {
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    for (const name of ['list_tasks', 'get_run', 'list_run_events', 'list_pending_approvals', 'list_chat_sessions', 'get_chat_session']) {
      expect(hints[name].readOnlyHint).toBe(true);
    }
    expect(hints.cancel_run.destructiveHint).toBe(true);
    expect(hints.resolve_approval.destructiveHint).toBe(true);
    expect(hints.create_task.readOnlyHint).toBe(false);
  });
});
