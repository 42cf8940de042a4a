import { Injectable, OnModuleInit, SetMetadata } from '@nestjs/common';
import { Declarations } from '@core/discovery/declarations';
import type { Principal, RequestOrigin } from '@core/context/request-context';
import type { RuntimeKind, SessionRow, TurnRow } from '../agent-chat-rows';
import { adapterNotFound } from '../agent-chat.errors';

/** What a runtime gets to start a turn the api has just committed (the turn, its messages, the session's counters). */
export interface LaunchRequest {
  principal: Principal;
  origin: RequestOrigin;
  session: SessionRow;
  turn: TurnRow;
  content: string;
  workspace: string;
  /** The previous turn, when it belongs to the segment this turn continues (see `continues`). */
  continuing: TurnRow | null;
  /** The user message is an earlier one re-run (rerun): the turn owns only its assistant message. */
  reusedUserMessage: boolean;
}

/**
 * One kind of turn (docs/api.md §4 `runtime_kind`): what runs it and how it is followed, stopped and recovered. The session,
 * its transcript, the busy rule, the streams, guidance, the queue and the guardrails are the same for every runtime —
 * a third one (External Agent) is one more provider marked @TurnRuntimeKind().
 */
export interface TurnRuntime {
  readonly kind: RuntimeKind;
  /** Whether the new turn continues the previous turn's segment (and its snapshot); null: a new segment. */
  continues(previous: TurnRow | null): TurnRow | null;
  /** Hands the committed turn to what runs it (a worker job, a task run, an adapter session); returns it as it now is. A refusal takes the turn back out and throws. */
  launch(req: LaunchRequest): Promise<TurnRow>;
  /** Brings an active turn up to date with what runs it (read from Postgres). */
  follow(turn: TurnRow): Promise<TurnRow>;
  /** Stops the turn (after `cancel_requested` is set): `cancelled` when it ended here, `cancelling` when its owner will end it. */
  cancel(turn: TurnRow, origin: RequestOrigin | null): Promise<'cancelled' | 'cancelling' | string>;
  /** The recovery pass's action for an active turn of this runtime (re-enqueue, catch up, fail what cannot go on). */
  recover(turn: TurnRow): Promise<void>;
}

const TURN_RUNTIME_METADATA = 'hecate:agent-chat-turn-runtime';

/** Marks a provider as the TurnRuntime of its `kind`: TurnRuntimes finds every one at startup; a kind declared twice is a boot error. */
export const TurnRuntimeKind = (): ClassDecorator => SetMetadata(TURN_RUNTIME_METADATA, true);

/** The runtimes of this process: every @TurnRuntimeKind() provider, found at startup (both roles build all three). */
@Injectable()
export class TurnRuntimes implements OnModuleInit {
  private readonly runtimes = new Map<string, TurnRuntime>();

  constructor(private readonly declarations: Declarations) {}

  onModuleInit(): void {
    for (const { instance: runtime } of this.declarations.classes<true, TurnRuntime>(TURN_RUNTIME_METADATA)) {
      if (this.runtimes.has(runtime.kind)) throw new Error(`agent chat runtime "${runtime.kind}" registered twice`);
      this.runtimes.set(runtime.kind, runtime);
    }
  }

  /** The runtime of a kind; an unregistered one answers 400 `agent_chat.adapter_not_found`. */
  get(kind: string, adapterId = ''): TurnRuntime {
    const r = this.runtimes.get(kind);
    if (!r) throw adapterNotFound(adapterId);
    return r;
  }

  has(kind: string): boolean {
    return this.runtimes.has(kind);
  }
}
