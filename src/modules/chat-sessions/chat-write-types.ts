import type { ChatMessageJson, MessageKind, MessageStatus } from './chat-message';

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

export interface NewProviderCall {
  id: string;
  requestId: string;
  provider: string;
  providerKind: string;
  model: string;
  requestedModel: string | null;
  routeReason: string | null;
  status: string;
  costMicrosUsd: number;
  promptTokens: number;
  completionTokens: number;
  createdAt?: Date;
}

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
