#!/usr/bin/env node
/**
 * A contender of bench/durable in its own process (so its CPU is counted apart), driven over Node's IPC channel:
 * `{ id, prompt }` in, `{ id, ok, turns, ms }` (or `{ id, ok: false, error }`) out once the run has ended.
 *   node loop-child.mjs plain <config json>   the agent loop as plain calls, nothing recorded;
 *   node loop-child.mjs dbos <config json>    DBOS Transact: one workflow per run (DBOS.startWorkflow, then the
 *                                             handle's getResult), each model call and each tool call a DBOS.runStep,
 *                                             the system database on Postgres (`systemDatabaseUrl`).
 * Config: { modelUrl, workspace, tools, dbosDir?, systemDatabaseUrl? }. Sends `{ ready: true }` once it takes runs.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { agentLoop } from './agent.mjs';

const [engine, json] = process.argv.slice(2);
const config = JSON.parse(json);
const base = { modelUrl: config.modelUrl, workspace: config.workspace, tools: config.tools };

/** The plain loop: every call made directly. */
function plainRunner() {
  return (prompt) => agentLoop({ ...base, prompt, step: (_name, fn) => fn() });
}

/** DBOS Transact from its install outside the repository; one registered workflow, launched on the scratch database. */
async function dbosRunner() {
  const { DBOS } = createRequire(join(config.dbosDir, 'node_modules', '/'))('@dbos-inc/dbos-sdk');
  DBOS.setConfig({ name: 'hecate-bench-durable', systemDatabaseUrl: config.systemDatabaseUrl, logLevel: 'warn' });
  const workflow = DBOS.registerWorkflow((prompt) => agentLoop({ ...base, prompt, step: (name, fn) => DBOS.runStep(fn, { name }) }), { name: 'agentRun' });
  await DBOS.launch();
  process.once('disconnect', () => DBOS.shutdown().finally(() => process.exit(0)));
  return async (prompt) => (await DBOS.startWorkflow(workflow)(prompt)).getResult();
}

const run = engine === 'dbos' ? await dbosRunner() : plainRunner();
process.on('message', async ({ id, prompt }) => {
  const t0 = performance.now();
  try {
    const turns = await run(prompt);
    process.send({ id, ok: true, turns, ms: performance.now() - t0 });
  } catch (err) {
    process.send({ id, ok: false, error: String(err?.stack ?? err) });
  }
});
if (engine !== 'dbos') process.once('disconnect', () => process.exit(0));
process.send({ ready: true });
