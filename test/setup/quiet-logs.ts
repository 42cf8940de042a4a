// In-process adapters log through pino; keep test output to what failed (child processes log normally).
import { createRootLogger } from '@core/logging/logger';

createRootLogger(process.env.TEST_LOG_LEVEL ?? 'fatal', 'test');
