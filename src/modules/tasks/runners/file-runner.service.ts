import { Injectable } from '@nestjs/common';
import { RunRunnerKind } from '../run-kind.decorator';
import type { FileOperation } from '../executors/file.executor';
import type { ExecutionContext, ExecutionOutcome, RunRunner } from '../run-executor';
import type { StepOutcome } from '../run-writer';
import type { PatchMetadata } from '../task-artifact.entity';
import { newId } from '../task-ids';
import { FileTooLargeError, PathEscapeError, readCurrent, relativeInside, unifiedDiff, writeCurrent } from '@modules/workspaces';

/** Runs execution_kind=file on a worker: one file operation in the workspace, recorded as an applied patch. */
@Injectable()
@RunRunnerKind()
export class FileRunnerService implements RunRunner {
  readonly kind = 'file';

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
    const fileError = (err: unknown): StepOutcome => ({
      status: 'failed',
      error: (err as Error).message,
      errorKind: err instanceof PathEscapeError ? 'invalid_path' : err instanceof FileTooLargeError ? 'file_too_large' : 'file_error',
    });
    let before: string | null;
    try {
      before = await readCurrent(ctx.workspace.path, target);
    } catch (err) {
      return fileError(err);
    }
    // A patch keeps the exact before/after text for revert, and Postgres text cannot hold NUL: binary files are refused.
    if (before?.includes('\0'))
      return { status: 'failed', error: `${path} is a binary file (contains NUL bytes); file tasks edit text`, errorKind: 'binary_file' };
    const after = operation === 'delete' ? null : operation === 'append' ? (before ?? '') + ctx.task.fileContent : ctx.task.fileContent;
    if (operation === 'delete' && before === null) return { status: 'failed', error: `${path} does not exist`, errorKind: 'file_not_found' };
    try {
      await writeCurrent(ctx.workspace.path, target, after);
    } catch (err) {
      return fileError(err);
    }
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
