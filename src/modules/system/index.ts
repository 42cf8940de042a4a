/** The system module's public face: other modules and the composition root import `@modules/system`, never its files. */
export { QueueProbeJob } from './queue-probe.job';
export { QueueProbesController } from './queue-probes.controller';
export { SystemModule } from './system.module';
