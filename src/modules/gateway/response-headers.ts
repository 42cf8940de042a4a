import { formatUsd } from '@core/money';
import type { InferenceRouteInfo } from '@modules/inference';

/** The X-Runtime-* headers of a /v1 response (docs/api.md §4): where the request went and what it cost. */
export function routeHeaders(info: InferenceRouteInfo, requestedModel: string | undefined, costMicros?: number): Record<string, string> {
  const h: Record<string, string> = {
    'x-runtime-provider': info.provider,
    'x-runtime-provider-kind': info.provider_kind,
    'x-runtime-model': info.model,
    'x-runtime-route-reason': info.route_reason,
    'x-runtime-attempts': String(info.attempts),
    'x-runtime-retries': String(Math.max(0, info.attempts - 1)),
  };
  if (requestedModel) h['x-runtime-requested-model'] = requestedModel;
  if (costMicros !== undefined) h['x-runtime-cost-usd'] = formatUsd(costMicros);
  return h;
}
