/** Micro-USD as the API's decimal dollar string (`cost_usd`, `X-Runtime-Cost-Usd`): six decimals. The one formatter. */
export const formatUsd = (micros: number): string => (micros / 1e6).toFixed(6);
