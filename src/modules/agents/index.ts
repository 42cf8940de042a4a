/** The agents module's public face (issue 27: saved agents). */
export { AgentsController } from './agents.controller';
export { AgentsModule } from './agents.module';
