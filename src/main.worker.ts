import '@core/telemetry/instrumentation';
import { boot } from './bootstrap';

void boot('worker');
