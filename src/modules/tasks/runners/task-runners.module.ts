import { Module, OnModuleInit } from '@nestjs/common';
import { SystemInfoRegistry } from '@core/health/system-info.registry';
import { ExecutorRegistry } from '../executor-registry.service';
import { SandboxService } from '../sandbox/sandbox.service';
import { TasksModule } from '../tasks.module';
import { FileRunnerService } from './file-runner.service';
import { GitRunnerService } from './git-runner.service';
import { ShellRunnerService } from './shell-runner.service';

/**
 * Worker-only (STYLE rule 16, DESIGN §11.2): what runs tasks' tools — the sandbox and the shell, git and file runners.
 * The api role never builds it, so it never probes bubblewrap or spawns a process.
 */
@Module({
  imports: [TasksModule],
  providers: [SandboxService, ShellRunnerService, GitRunnerService, FileRunnerService],
})
export class TaskRunnersModule implements OnModuleInit {
  constructor(
    private readonly registry: SystemInfoRegistry,
    private readonly sandbox: SandboxService,
    private readonly executors: ExecutorRegistry,
  ) {}

  onModuleInit(): void {
    this.executors.registerSandbox(this.sandbox);
    this.registry.addLiveness('sandbox', () => this.sandbox.describe());
  }
}
