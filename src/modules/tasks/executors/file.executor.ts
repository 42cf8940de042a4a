import { createHash } from 'node:crypto';
import { isAbsolute, normalize } from 'node:path';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { ExecutorRegistry } from '../executor-registry.service';
import type { ExecutionContext, ExecutionOutcome, ExecutionPlan, RunExecutor } from '../run-executor';
import type { StepOutcome } from '../run-writer';
import type { PatchMetadata } from '../task-artifact.entity';
import { newId } from '../task-ids';
import type { TaskEntity } from '../task.entity';
import { PathEscapeError } from '../tasks.errors';
import { relativeInside } from '../workspace/path-resolver';
import { readCurrent, writeCurrent } from './file-ops';
import { unifiedDiff } from './unified-diff';

type FileOperation = 'write' | 'append' | 'delete';

/** execution_kind=file: write/append/delete one file in the workspace, recorded as an applied patch. */
@Injectable()
export class FileExecutor implements RunExecutor, OnModuleInit {
  readonly kind = 'file';

  constructor(private readonly registry: ExecutorRegistry) {}

  onModuleInit(): void {
    this.registry.register(this);
  }

  validate(task: TaskEntity): string[] {
    const problems: string[] = [];
    if (!task.filePath.trim()) problems.push('file_path is required for execution_kind=file');
    else if (task.filePath.includes('\0')) problems.push('file_path contains a NUL byte');
    else if (task.workspaceMode !== 'in_place' && (isAbsolute(task.filePath) || normalize(task.filePath).split(/[\\/]/)[0] === '..')) {
      problems.push('file_path must be relative to the workspace and stay inside it');
    }
    if (task.sandboxReadOnly) problems.push('sandbox_read_only forbids execution_kind=file');
    return problems;
  }

  plan(task: TaskEntity, workspacePath: string): ExecutionPlan {
    const operation = (task.fileOperation || 'write') as FileOperation;
    const contentSha = createHash('sha256').update(task.fileContent).digest('hex');
    return {
      summary: [
        `${operation} ${task.filePath}`,
        `workspace: ${workspacePath}`,
        operation === 'delete' ? 'removes the file' : `${Buffer.byteLength(task.fileContent)} bytes, sha256 ${contentSha.slice(0, 16)}…`,
      ],
      details: { operation, path: task.filePath, cwd: workspacePath, content_bytes: Buffer.byteLength(task.fileContent), content_sha256: contentSha },
      identity: { operation, path: task.filePath, cwd: workspacePath, content_sha256: contentSha },
    };
  }

  async execute(ctx: ExecutionContext): Promise<ExecutionOutcome> {
    const { task } = ctx;
    const operation = (task.fileOperation || 'write') as FileOperation;
    const input: Record<string, unknown> = { operation, path: task.filePath, content_bytes: Buffer.byteLength(task.fileContent) };
    if (ctx.checkpoint) input.checkpoint = ctx.checkpoint;
    const { outcome } = await ctx.writer.step(
      { index: ctx.firstStepIndex, kind: 'file', title: `File ${operation}`, toolName: 'file_write', input, idempotent: false },
      (step) => this.apply(ctx, step.id, operation),
    );
    return outcome.status === 'completed'
      ? { status: 'completed' }
      : { status: 'failed', error: outcome.error ?? 'file operation failed', errorKind: outcome.errorKind ?? 'file_error' };
  }

  private async apply(ctx: ExecutionContext, stepId: string, operation: FileOperation): Promise<StepOutcome> {
    if (ctx.workspace.readOnly) return { status: 'failed', error: 'the sandbox is read-only', errorKind: 'read_only' };
    let target: string;
    try {
      target = await ctx.workspace.resolve(ctx.task.filePath, 'file_path');
    } catch (err) {
      if (err instanceof PathEscapeError) return { status: 'failed', error: err.message, errorKind: 'invalid_path' };
      throw err;
    }
    const path = await relativeInside(ctx.workspace.path, target);
    let before: string | null;
    try {
      before = await readCurrent(target);
    } catch (err) {
      return { status: 'failed', error: (err as Error).message, errorKind: 'file_error' };
    }
    const after = operation === 'delete' ? null : operation === 'append' ? (before ?? '') + ctx.task.fileContent : ctx.task.fileContent;
    if (operation === 'delete' && before === null) return { status: 'failed', error: `${path} does not exist`, errorKind: 'file_not_found' };
    await writeCurrent(target, after);
    const diff = unifiedDiff(path, before, after);
    const artifactId = newId('artifact');
    const metadata: PatchMetadata = {
      path,
      operation,
      before_existed: before !== null,
      before_content: before ?? '',
      after_exists: after !== null,
      after_content: after ?? '',
    };
    return {
      status: 'completed',
      outputSummary: { path, operation, diff_bytes: Buffer.byteLength(diff), before_existed: before !== null },
      artifacts: [
        {
          id: artifactId,
          kind: 'patch',
          name: path,
          path,
          mimeType: 'text/x-diff',
          content: diff,
          status: 'applied',
          metadata: metadata as unknown as Record<string, unknown>,
        },
      ],
      events: [
        {
          type: 'tool.file.patch',
          data: {
            tool_call_id: stepId,
            operation,
            path,
            artifact_id: artifactId,
            diff_bytes: Buffer.byteLength(diff),
            before_existed: before !== null,
            artifact_status: 'applied',
          },
        },
      ],
    };
  }
}
