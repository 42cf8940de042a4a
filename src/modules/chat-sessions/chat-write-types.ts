import type { ChatMessageJson, MessageKind, MessageStatus } from './chat-message';
import type { ChatProviderCallRow } from './chat-rows';

/** What ChatTx writes: the inputs of its inserts and updates. */
export interface NewMessage {
  id?: string;
  message: ChatMessageJson;
  status?: MessageStatus;
  kind?: MessageKind;
  producedByCallId?: string | null;
  clientRequestId?: string | null;
  error?: Record<string, unknown> | null;
}

/** A call to insert: its row without what the insert fills in (the session, the total tokens) and, optionally, its time. */
export type NewProviderCall = Omit<ChatProviderCallRow, 'sessionId' | 'totalTokens' | 'createdAt'> & { createdAt?: Date };

export interface NewGeneration {
  id: string;
  leafKey: string;
  messageId: string | null;
  kind: string;
  previousStatus: string | null;
  /** The process holding it (where a stop is sent). */
  owner: string;
  /** The lease (core/lease): this generation's token and its length. */
  token: string;
  leaseMs: number;
}

export interface MessagePatch {
  message?: ChatMessageJson;
  status?: MessageStatus;
  producedByCallId?: string | null;
  error?: Record<string, unknown> | null;
  replayCount?: number;
  replayChars?: number;
}

/** The active leaf as read with the locked session row. */
export interface LeafInfo {
  id: string;
  replayCount: number;
  replayChars: number;
  status: MessageStatus;
}
