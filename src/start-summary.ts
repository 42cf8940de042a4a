import type { INestApplication } from '@nestjs/common';
import type { AppConfig } from '@core/config/app-config';
import { API_DOCS_PATH } from '@core/http/openapi/api-docs';
import { NO_PROVIDER_ACTION } from '@modules/inference';
import { ProviderRegistryService } from '@modules/providers';

/**
 * What the `hecate listening` line tells the person who just started the server: where it answers, how it stores, where
 * its data lives (never a connection string), how many providers it routes to — and, with none, the exact variable to
 * set — and where the console and the API reference are.
 */
export function startSummary(app: INestApplication, config: AppConfig, url: string, consoleServed: boolean): Record<string, unknown> {
  const providers = app.get(ProviderRegistryService, { strict: false }).list().length;
  return {
    url,
    mode: config.mode,
    data: config.mode === 'embedded' ? config.database.dataDir : 'Postgres (DATABASE_URL) and Redis (REDIS_URL)',
    providers,
    ...(providers === 0 ? { next: NO_PROVIDER_ACTION } : {}),
    ...(consoleServed ? { console: `${url}/` } : {}),
    api_docs: `${url}${API_DOCS_PATH}`,
  };
}
