import { createHash } from 'node:crypto';
import { isAbsolute, normalize } from 'node:path';
import { Injectable } from '@nestjs/common';
import { RunExecutorKind } from '../run-kind.decorator';
import type { ExecutionPlan, RunExecutor } from '../run-executor';
import type { TaskEntity } from '../task.entity';

export type FileOperation = 'write' | 'append' | 'delete';

/** execution_kind=file: write/append/delete one file in the workspace, recorded as an applied patch (validation and plan; FileRunnerService runs it). */
@Injectable()
@RunExecutorKind()
export class FileExecutor implements RunExecutor {
  readonly kind = 'file';

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
}
