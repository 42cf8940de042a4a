/** The chat-sessions module's public face: other modules import from `@modules/chat-sessions`, never its files. */
export { ChatSessionsModule } from './chat-sessions.module';
export { ChatExchangeRecorderService, type ExchangeResult, type PreparedExchange } from './chat-exchange-recorder.service';
export type { GeneratedReply } from './chat-message';
export { ChatSessionsController } from './chat-sessions.controller';
export { ChatTurnsController } from './chat-turns.controller';
export { ChatSessionsService } from './chat-sessions.service';
export { GetChatSessionQueryDto } from './chat-session.dto';
export { ChatSessionErrorType } from './chat-sessions.errors';
