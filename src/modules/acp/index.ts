export { serveAcp } from './acp-agent';
export { acpConfig, AcpConfigError, type AcpConfig } from './acp-config';
