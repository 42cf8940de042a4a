import { Type } from 'class-transformer';
import { IsInt, IsOptional, Min } from 'class-validator';

/**
 * Resource limits of every sandboxed command (shell, git, MCP stdio servers, external agent adapters), set as rlimits
 * on the command (0 = no limit).
 */
export class SandboxLimitsEnv {
  /**
   * RLIMIT_NPROC: processes and threads of the sandbox uid. The kernel counts them per uid, so the limit is shared by
   * all commands running as GATEWAY_TASK_SANDBOX_UID at once; applied only to commands that run as that uid.
   */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_SANDBOX_MAX_PROCESSES?: number;
  /** RLIMIT_DATA per process (heap and private writable memory). A Node.js child needs about 640 MiB of it to start. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_SANDBOX_MAX_MEMORY_BYTES?: number;
  /** RLIMIT_FSIZE: the largest file a command may write (a writer past it is killed by SIGXFSZ). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_SANDBOX_MAX_FILE_BYTES?: number;
  /** Size of the command's private /tmp (a tmpfs: memory). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) GATEWAY_TASK_SANDBOX_TMP_BYTES?: number;
}

export interface SandboxLimitsConfig {
  maxProcesses: number;
  maxMemoryBytes: number;
  maxFileBytes: number;
  tmpBytes: number;
}

const MiB = 1024 * 1024;

export function sandboxLimitsConfig(env: SandboxLimitsEnv): SandboxLimitsConfig {
  return {
    maxProcesses: env.GATEWAY_TASK_SANDBOX_MAX_PROCESSES ?? 1024,
    maxMemoryBytes: env.GATEWAY_TASK_SANDBOX_MAX_MEMORY_BYTES ?? 2048 * MiB,
    maxFileBytes: env.GATEWAY_TASK_SANDBOX_MAX_FILE_BYTES ?? 4096 * MiB,
    tmpBytes: env.GATEWAY_TASK_SANDBOX_TMP_BYTES ?? 512 * MiB,
  };
}
