import { spawnSync } from 'node:child_process';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { rootLogger } from '@core/logging/logger';

export type SandboxLayer = 'bwrap' | 'none';

export interface SandboxPolicy {
  workspace: string;
  cwd: string;
  readOnly: boolean;
  network: boolean;
}

/**
 * OS isolation for task subprocesses (DESIGN §8): bubblewrap when it is installed and works here
 * (read-only root, writable workspace unless read-only, no network unless `sandbox_network`), else none.
 * GATEWAY_TASK_SANDBOX=bwrap makes a missing bwrap a startup error; =none disables it.
 * Worker-only (TaskRunnersModule): the probe runs in the worker's init hook, never in a constructor or in the api.
 */
@Injectable()
export class SandboxService implements OnModuleInit {
  private detected: SandboxLayer | undefined;

  constructor(private readonly config: AppConfig) {}

  onModuleInit(): void {
    this.detected = SandboxService.detect(this.config.tasks.sandbox);
  }

  get layer(): SandboxLayer {
    if (!this.detected) throw new Error('SandboxService used before the worker initialised it');
    return this.detected;
  }

  static detect(mode: 'auto' | 'bwrap' | 'none'): SandboxLayer {
    if (mode === 'none') return 'none';
    const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-net', '--die-with-parent', 'true'], {
      timeout: 5000,
      stdio: 'ignore',
    });
    if (probe.status === 0) return 'bwrap';
    if (mode === 'bwrap') throw new Error('GATEWAY_TASK_SANDBOX=bwrap but bubblewrap (bwrap) is not installed or cannot create namespaces here');
    rootLogger().info('bubblewrap not available: task subprocesses run without OS isolation (sandbox.os_isolation=false)');
    return 'none';
  }

  get osIsolation(): boolean {
    return this.layer === 'bwrap';
  }

  /** The argv that runs `argv` under the policy. */
  wrap(argv: string[], policy: SandboxPolicy): string[] {
    if (this.layer === 'none') return argv;
    const args = ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
    args.push(policy.readOnly ? '--ro-bind' : '--bind', policy.workspace, policy.workspace);
    args.push('--chdir', policy.cwd, '--unshare-pid', '--die-with-parent', '--new-session');
    if (!policy.network) args.push('--unshare-net');
    args.push('--', ...argv);
    return args;
  }
}
