import type * as Acp from '@agentclientprotocol/sdk' with { 'resolution-mode': 'import' };

export type { Acp };

/** The SDK is ESM only and the build is CommonJS: loaded once, at start. */
let sdk: Promise<typeof Acp> | undefined;
export const loadAcpSdk = (): Promise<typeof Acp> => (sdk ??= import('@agentclientprotocol/sdk'));
