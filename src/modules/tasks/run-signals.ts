/** Bus channel an api process rings after committing a cancel; the worker running the run kills it. */
export const cancelChannel = (runId: string): string => `runs.cancel.${runId}`;
export const CANCEL_CHANNEL_PATTERN = 'runs.cancel.*';
export const cancelledRunOf = (channel: string): string => channel.slice('runs.cancel.'.length);
