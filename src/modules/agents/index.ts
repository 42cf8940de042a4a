/** The agents module's public face (saved agents). */
export { AgentsController } from './agents.controller';
export { AgentsModule } from './agents.module';
