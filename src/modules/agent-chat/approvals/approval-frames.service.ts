import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { LiveStreamBuffer } from '@core/live-streams/live-stream-buffer.port';
import { ApprovalsService } from '@modules/approvals';
import { type AppendedEvent, EventStore, TERMINAL_RUN_EVENTS } from '@modules/events';
import { taskRequestedFrame, taskResolvedFrame } from './approval-views';

/**
 * A run's task approvals on its live stream (docs/api.md §4 session stream), so a Hecate Agent turn's stream (the
 * run's: stream id = run id) carries `approval.requested` / `approval.resolved` in the shape External Agent turns send.
 * Each frame is appended right after the transaction that opened or decided the approval commits and before its
 * doorbells ring (EventStore.onCommit) — in the process that wrote it: the worker pausing the run, the api resolving the
 * approval (before the run is requeued) or cancelling the run. So the frames sit between the deltas before and after
 * them, and every reader, one resuming later from the buffer too, sees them in that order. A decision that ends the run
 * (a rejection, a cancelled run) also ends its live stream after the frame: nothing writes to it any more.
 */
@Injectable()
export class ApprovalFramesService implements OnModuleInit {
  constructor(
    private readonly events: EventStore,
    private readonly approvals: ApprovalsService,
    @Inject(LiveStreamBuffer) private readonly live: LiveStreamBuffer,
  ) {}

  onModuleInit(): void {
    this.events.onCommit((appended) => this.mirror(appended));
  }

  private async mirror(appended: readonly AppendedEvent[]): Promise<void> {
    for (const { tenantId, envelope: e } of appended) {
      if (e.type !== 'approval.requested' && e.type !== 'approval.resolved') continue;
      const id = e.data.approval_id;
      if (typeof id !== 'string' || !e.task_id) continue;
      const approval = await this.approvals.get(tenantId, e.task_id, id);
      const frame = e.type === 'approval.requested' ? taskRequestedFrame(approval) : taskResolvedFrame(approval);
      await this.live.append(e.run_id, JSON.stringify(frame));
      if (e.type === 'approval.resolved' && appended.some((x) => x.envelope.run_id === e.run_id && TERMINAL_RUN_EVENTS.has(x.envelope.type))) {
        await this.live.markDone(e.run_id);
      }
    }
  }
}
