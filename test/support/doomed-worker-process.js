// A stand-in for a worker that dies at the worst moment. It loads the BUILT sandbox (npm test builds first; HECATE_DIST
// selects another build folder), starts `sh -c 'sleep <marker> & sleep <marker>; wait'` the way a worker starts any
// command — SandboxService.wrap, then SupervisedProcess — and SIGKILLs itself <delayMs> after the spawn, while
// bubblewrap may still be setting the sandbox up.
//   node doomed-worker-process.js <marker> <delayMs> <workspace> [GATEWAY_TASK_SANDBOX]
'use strict';
const path = require('node:path');
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');

const dist = path.resolve(__dirname, '../..', process.env.HECATE_DIST || 'dist');
const { loadConfig } = require(path.join(dist, 'src/core/config/config.loader.js'));
const { SandboxService } = require(path.join(dist, 'src/modules/workspaces/sandbox/sandbox.service.js'));
const { SupervisedProcess } = require(path.join(dist, 'src/modules/workspaces/sandbox/supervised-process.js'));

const [marker, delayMs, workspace, mode = 'auto'] = process.argv.slice(2);
const config = loadConfig({
  PATH: process.env.PATH,
  GATEWAY_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'hecate-doomed-')),
  GATEWAY_WORKSPACES_DIR: path.dirname(workspace),
  GATEWAY_TASK_SANDBOX: mode,
});
const sandbox = new SandboxService(config);
void sandbox.onModuleInit().then(() => {
  const argv = sandbox.wrap(['sh', '-c', `sleep ${marker} & sleep ${marker}; wait`], { workspace, cwd: workspace, readOnly: false, network: false });
  const proc = SupervisedProcess.spawn({ argv, cwd: workspace, env: { PATH: '/usr/bin:/bin' }, stdin: 'ignore', graceMs: 1000 });
  proc.child.once('spawn', () => setTimeout(() => process.kill(process.pid, 'SIGKILL'), Number(delayMs)));
});
