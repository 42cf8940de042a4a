/** The webhooks module's public face. */
export { WebhooksController } from './webhooks.controller';
export { WebhooksModule, WebhooksWorkerModule } from './webhooks.module';
