/** The schedules module's public face. */
export { SchedulesController } from './schedules.controller';
export { SchedulesModule, SchedulesWorkerModule } from './schedules.module';
