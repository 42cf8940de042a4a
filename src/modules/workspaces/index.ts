/** The workspaces module's public face: the command sandbox, the process supervisor, workspaces and their file/git/diff helpers. */
export { WorkspacesModule, WorkspacesWorkerModule } from './workspaces.module';
export { COMMAND_SANDBOX, type CommandSandbox, type SandboxPolicy } from './command-sandbox';
export { PathEscapeError } from './workspace-errors';
export { describeExit, type ProcessExit, SupervisedProcess, type SupervisedSpec } from './sandbox/supervised-process';
export { type ProcessResult, type ProcessSpec, runProcess } from './sandbox/process-runner';
export { limitHint } from './sandbox/sandbox-limits';
export { commandEnv } from './workspace/command-env';
export { FileTooLargeError, inGitDir, MAX_EDIT_BYTES, readCurrent, writeCurrent } from './workspace/file-ops';
export { relativeInside, resolveInside } from './workspace/path-resolver';
export { listWorkspaceDir, readHead, withWorkspaceFile, writeWorkspaceFile } from './workspace/workspace-fs';
export { scanWorkspace, type ScanOutcome } from './workspace/workspace-scan-runner';
export { WorkspaceGit } from './workspace/workspace-git';
export {
  isDir,
  type WorkspaceCaller,
  WorkspaceService,
  type WorkspaceSource,
  type WorkspaceSpec,
  WorkspaceTooLargeError,
  workspaceUnavailable,
} from './workspace/workspace.service';
export { GIT_ENV, gitArgv, gitArgvProblem } from './git/git-argv';
export { unifiedDiff } from './git/unified-diff';
