import type { TasksConfig } from '@core/config/groups/tasks.env';
import type { ExecutionContext, ExecutionOutcome, ExecutionPlan } from '../run-executor';
import type { NewArtifact, StepOutcome } from '../run-writer';
import { type CommandSandbox, commandEnv, limitHint, runProcess } from '@modules/workspaces';
import { storableText } from '@core/database/storable';
import { ChunkStreamer } from './chunk-streamer';

export interface CommandSpec {
  kind: 'shell' | 'git';
  toolName: 'shell_exec' | 'git_exec';
  title: string;
  argv: string[];
  /** Variables added to the allowlisted environment (values are not secret; keys are shown to approvers). */
  extraEnv?: Record<string, string>;
  /** Extra artifacts after the command (git_summary). */
  summarize?(cwd: string): Promise<NewArtifact[]>;
}

export function commandPlan(
  config: TasksConfig,
  task: { timeoutMs: number; sandboxNetwork: boolean; sandboxReadOnly: boolean },
  spec: Pick<CommandSpec, 'argv' | 'extraEnv'>,
  workspacePath: string,
): ExecutionPlan {
  const envKeys = Object.keys(commandEnv(config, workspacePath, spec.extraEnv)).sort();
  const timeoutMs = task.timeoutMs || config.defaultTimeoutMs;
  return {
    summary: [
      `argv: ${JSON.stringify(spec.argv)}`,
      `cwd: ${workspacePath}`,
      `env keys: ${envKeys.join(', ')}`,
      `sandbox: ${config.sandbox}${task.sandboxNetwork ? ', network allowed' : ', no network'}${task.sandboxReadOnly ? ', read-only' : ''}`,
      `timeout: ${timeoutMs} ms`,
    ],
    details: {
      argv: spec.argv,
      cwd: workspacePath,
      env_keys: envKeys,
      timeout_ms: timeoutMs,
      sandbox_network: task.sandboxNetwork,
      sandbox_read_only: task.sandboxReadOnly,
    },
    identity: { argv: spec.argv, cwd: workspacePath },
  };
}

const failureOf = (o: StepOutcome): ExecutionOutcome =>
  o.status === 'completed' ? { status: 'completed' } : { status: 'failed', error: o.error ?? o.status, errorKind: o.errorKind ?? o.status };

/**
 * Runs one command as the run's command step: cleaned environment, timeout, output cap, OS sandbox when
 * available, output streamed as events, stdout/stderr artifacts, exit code on the step.
 */
export async function runCommandStep(ctx: ExecutionContext, sandbox: CommandSandbox, spec: CommandSpec): Promise<ExecutionOutcome> {
  const { config, task, workspace } = ctx;
  const env = commandEnv(config, workspace.path, spec.extraEnv);
  const timeoutMs = task.timeoutMs || config.defaultTimeoutMs;
  const input: Record<string, unknown> = {
    argv: spec.argv,
    cwd: workspace.path,
    env_keys: Object.keys(env).sort(),
    timeout_ms: timeoutMs,
    sandbox_layer: sandbox.layer,
    sandbox_network: workspace.network,
    sandbox_read_only: workspace.readOnly,
  };
  if (ctx.checkpoint) input.checkpoint = ctx.checkpoint;
  const { outcome } = await ctx.writer.step(
    {
      index: ctx.firstStepIndex,
      kind: spec.kind,
      title: spec.title,
      toolName: spec.toolName,
      input,
      idempotent: false,
      startEvents: (stepId) => [{ type: 'tool.shell.command', data: { tool_call_id: stepId, ...input } }],
    },
    async (step) => {
      const refusal = sandbox.refusal();
      if (refusal) return { status: 'failed', error: refusal, errorKind: 'sandbox_unavailable', outputSummary: { sandbox_layer: sandbox.layer } };
      const local = new AbortController();
      const onAbort = () => local.abort(ctx.signal.reason);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      const streamer = new ChunkStreamer(ctx.writer, step.id, (err) => local.abort(err));
      const argv = sandbox.wrap(spec.argv, { workspace: workspace.path, cwd: workspace.path, readOnly: workspace.readOnly, network: workspace.network });
      const result = await runProcess({
        argv,
        cwd: workspace.path,
        env,
        timeoutMs,
        maxOutputBytes: config.maxOutputBytes,
        signal: local.signal,
        onOutput: (stream, chunk) => streamer.push(stream, chunk),
      });
      ctx.signal.removeEventListener('abort', onAbort);
      await streamer.close();
      if (local.signal.aborted && local.signal.reason instanceof Error && !ctx.signal.aborted) throw local.signal.reason;
      const bytes = result.stdout.length + result.stderr.length;
      const artifacts: NewArtifact[] = [{ kind: 'stdout', name: 'stdout', content: storableText(result.stdout.toString('utf8')), truncated: result.truncated }];
      if (result.stderr.length > 0)
        artifacts.push({ kind: 'stderr', name: 'stderr', content: storableText(result.stderr.toString('utf8')), truncated: result.truncated });
      if (spec.summarize && !result.spawnError) artifacts.push(...(await spec.summarize(workspace.path)));
      const exited = {
        type: 'tool.shell.exited',
        data: { tool_call_id: step.id, exit_code: result.exitCode, signal: result.signal, bytes, truncated: result.truncated },
      };
      const outputSummary = { exit_code: result.exitCode, duration_ms: result.durationMs, bytes, truncated: result.truncated, sandbox_layer: sandbox.layer };
      const base = { outputSummary, exitCode: result.exitCode, artifacts, events: [exited] };
      if (result.spawnError) return { ...base, status: 'failed', error: `could not start ${spec.argv[0]}: ${result.spawnError}`, errorKind: 'spawn_error' };
      if (result.cancelled) return { ...base, status: 'cancelled', error: 'cancelled', errorKind: 'cancelled' };
      if (result.timedOut) return { ...base, status: 'timed_out', error: `timed out after ${timeoutMs} ms`, errorKind: 'timeout' };
      if (result.truncated)
        return {
          ...base,
          status: 'failed',
          error: `output exceeded ${config.maxOutputBytes} bytes; the command was stopped`,
          errorKind: 'output_limit_exceeded',
        };
      if (result.exitCode !== 0)
        return {
          ...base,
          status: 'failed',
          error: `exit status ${result.exitCode ?? result.signal}${limitHint(result.exitCode, result.signal, result.stderr.toString('utf8', Math.max(0, result.stderr.length - 4096)))}`,
          errorKind: 'exit_status',
        };
      return { ...base, status: 'completed' };
    },
  );
  return failureOf(outcome);
}
