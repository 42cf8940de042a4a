import { Module } from '@nestjs/common';
import { EventsModule } from '@modules/events';
import { WebhookDispatcher } from './webhook-dispatcher.service';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksRetention } from './webhooks-retention';
import { WebhooksService } from './webhooks.service';

/** Webhooks: the API's service (both roles build it; the api's controller uses it). */
@Module({
  providers: [WebhooksRepository, WebhooksService, WebhooksRetention],
  exports: [WebhooksRepository, WebhooksService],
})
export class WebhooksModule {}

/** The dispatcher: worker role only (docs/design.md §11.2), so no api process makes outbound calls for a tenant. */
@Module({
  imports: [WebhooksModule, EventsModule],
  providers: [WebhookDispatcher],
})
export class WebhooksWorkerModule {}
