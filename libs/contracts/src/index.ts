export * from './api';
export * from './errors';
export * from './events';
export * from './jobs';
export * from './traces';
export * from './worker-requests';
