/** The gateway module's public face: other modules and the composition root import `@modules/gateway`, never its files. */
export { ChatCompletionsController } from './chat-completions.controller';
export { GatewayModule } from './gateway.module';
export { MessagesController } from './messages.controller';
export { ModelsController } from './models.controller';
export { ResponsesController } from './responses.controller';
