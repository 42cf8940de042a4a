import '@core/compile-cache';
import '@core/telemetry/instrumentation';
import { boot } from './bootstrap';

/** `npm start`: api and worker in one process (embedded by default; scaled when DATABASE_URL and REDIS_URL are set). */
void boot('all');
