// docker-compose.yml rendered as Compose reads it (test/support/compose.ts), then what `docker compose up` would give
// each container: the worker runs task commands under bubblewrap out of the box (issue 33), the api keeps Docker's
// confinement. The seccomp profile is read the way the engine applies it (test/support/seccomp-profile.ts).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { interpolate, renderCompose, securityOptions, serviceEnvironment, type ComposeProject } from '../support/compose';
import { CLONE, readSeccompProfile, seccompVerdict, type SeccompProfile } from '../support/seccomp-profile';

const CREDENTIALS = { GATEWAY_AUTH_TOKEN: 'a'.repeat(64), GATEWAY_SECRET_KEY: 'b'.repeat(44) };
const ALLOW = { action: 'SCMP_ACT_ALLOW' };
const EPERM = { action: 'SCMP_ACT_ERRNO', errno: 1 };

/** bubblewrap's clone for the sandbox's flags (--unshare-pid/-ipc/-uts/-cgroup-try/-net and its own user + mount namespaces). */
const BWRAP_CLONE =
  CLONE.NEWUSER | CLONE.NEWNS | CLONE.NEWPID | CLONE.NEWIPC | CLONE.NEWUTS | CLONE.NEWCGROUP | CLONE.NEWNET | CLONE.SIGCHLD;

describe('docker-compose.yml', () => {
  let project: ComposeProject;
  let profileFile: string;
  let profile: SeccompProfile;

  beforeAll(() => {
    project = renderCompose(CREDENTIALS);
    profileFile = path.resolve(project.dir, securityOptions(project.services.worker).seccomp);
    profile = readSeccompProfile(profileFile);
  });

  it('renders the stack, and refuses to without the credentials, saying how to make them', () => {
    expect(project.name).toBe('hecate');
    expect(Object.keys(project.services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
    // Merge keys and defaults resolved: the shared environment reached every app service.
    for (const name of ['migrate', 'api', 'worker']) {
      expect(serviceEnvironment(project.services[name])).toMatchObject({
        DATABASE_URL: 'postgres://hecate:hecate@postgres:5432/hecate',
        GATEWAY_AUTH_TOKEN: CREDENTIALS.GATEWAY_AUTH_TOKEN,
      });
      expect(project.services[name].image).toBe('hecate-server:local');
    }
    expect(() => renderCompose({ GATEWAY_SECRET_KEY: 'x' })).toThrow(/required variable GATEWAY_AUTH_TOKEN is missing a value: set it/);
  });

  it('gives the worker bubblewrap isolation: GATEWAY_TASK_SANDBOX=bwrap, the shipped seccomp profile, AppArmor and /proc unmasked', () => {
    const worker = project.services.worker;
    expect(serviceEnvironment(worker).GATEWAY_TASK_SANDBOX).toBe('bwrap');
    expect(securityOptions(worker)).toEqual({
      seccomp: './deploy/seccomp/hecate-worker.json',
      apparmor: 'unconfined',
      systempaths: 'unconfined',
    });
    expect(existsSync(profileFile)).toBe(true);
    // The operator's opt-out still works, from the shell or .env.
    expect(serviceEnvironment(renderCompose({ ...CREDENTIALS, GATEWAY_TASK_SANDBOX: 'none' }).services.worker).GATEWAY_TASK_SANDBOX).toBe('none');
  });

  it("the worker's profile allows what bubblewrap does and still denies what Docker's default denies", () => {
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
    expect(profile.archMap?.map((a) => a.architecture)).toEqual(expect.arrayContaining(['SCMP_ARCH_X86_64', 'SCMP_ARCH_AARCH64']));
    // bubblewrap, unprivileged in the container (uid 10001, no CAP_SYS_ADMIN).
    expect(seccompVerdict(profile, 'clone', [BWRAP_CLONE])).toEqual(ALLOW);
    expect(seccompVerdict(profile, 'unshare', [CLONE.NEWUSER])).toEqual(ALLOW);
    for (const syscall of ['mount', 'pivot_root', 'umount2']) expect(seccompVerdict(profile, syscall)).toEqual(ALLOW);
    // Everything else a node worker does, as before.
    expect(seccompVerdict(profile, 'clone', [CLONE.THREAD])).toEqual(ALLOW);
    for (const syscall of ['read', 'execve', 'setsid', 'prctl', 'capset', 'chroot']) expect(seccompVerdict(profile, syscall)).toEqual(ALLOW);
    expect(seccompVerdict(profile, 'socket', [16])).toEqual(ALLOW); // AF_NETLINK: bubblewrap brings up lo in the new netns
    // Docker's default denials stand: kernel modules, keyrings, kexec, bpf, joining other namespaces, raw handles.
    for (const syscall of ['init_module', 'kexec_load', 'add_key', 'keyctl', 'bpf', 'setns', 'open_by_handle_at', 'reboot', 'swapon']) {
      expect([syscall, seccompVerdict(profile, syscall)]).toEqual([syscall, EPERM]);
    }
    expect(seccompVerdict(profile, 'clone3')).toEqual({ action: 'SCMP_ACT_ERRNO', errno: 38 }); // ENOSYS: libc falls back to clone
    expect(seccompVerdict(profile, 'socket', [40])).toEqual(EPERM); // AF_VSOCK
  });

  it("the loosening is the one commented rule: without it the profile is Docker's default, which stops bubblewrap", () => {
    const added = profile.syscalls.filter((rule) => rule.comment?.startsWith('Hecate worker'));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ action: 'SCMP_ACT_ALLOW', names: ['clone', 'mount', 'pivot_root', 'umount2', 'unshare'] });
    expect(added[0].args ?? []).toEqual([]);
    const dockerDefault = { ...profile, syscalls: profile.syscalls.filter((rule) => !added.includes(rule)) };
    expect(seccompVerdict(dockerDefault, 'clone', [BWRAP_CLONE])).toEqual(EPERM);
    expect(seccompVerdict(dockerDefault, 'clone', [CLONE.THREAD])).toEqual(ALLOW);
    for (const syscall of ['unshare', 'mount', 'pivot_root', 'umount2']) expect(seccompVerdict(dockerDefault, syscall)).toEqual(EPERM);
  });

  it('leaves the api and the one-shot migrate under Docker defaults (no profile, no sandbox mode: they run no commands)', () => {
    for (const name of ['api', 'migrate', 'postgres', 'redis']) {
      expect([name, project.services[name].security_opt]).toEqual([name, undefined]);
      expect([name, serviceEnvironment(project.services[name]).GATEWAY_TASK_SANDBOX]).toEqual([name, undefined]);
    }
  });

  it('builds bubblewrap into the image the worker runs', () => {
    const dockerfile = readFileSync(path.join(project.dir, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.indexOf('AS runtime'));
    expect(runtime).toMatch(/apt-get install[^\n]*\bbubblewrap\b/);
    expect(project.services.worker.build).toMatchObject({ context: '.', dockerfile: 'Dockerfile' });
  });
});

describe("the worker's seccomp profile, loaded by libseccomp as the engine loads it (no Docker engine here)", () => {
  const IMAGE_UID = '10001';
  const SECCOMP_EXEC = path.resolve(__dirname, '../support/seccomp-exec.py');

  /** bubblewrap with the sandbox's namespaces and mounts (SandboxService.bwrapArgs), as the image's user, under `profile`. */
  function bwrapUnder(profile: string, workspace: string) {
    const bwrap = ['bwrap', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session'];
    bwrap.push('--unshare-net', '--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc');
    for (const link of ['bin', 'lib', 'lib64', 'sbin']) bwrap.push('--symlink', `usr/${link}`, `/${link}`);
    bwrap.push('--dev', '/dev', '--proc', '/proc', '--perms', '1777', '--tmpfs', '/tmp', '--bind', workspace, workspace, '--chdir', workspace);
    const command = ['sh', '-c', 'echo "uid $(id -u), pid $$"; touch made-here'];
    const setpriv = ['setpriv', '--reuid', IMAGE_UID, '--regid', IMAGE_UID, '--clear-groups'];
    return spawnSync(setpriv[0], [...setpriv.slice(1), '/usr/bin/python3', SECCOMP_EXEC, profile, ...bwrap, '--', ...command], {
      encoding: 'utf8',
      timeout: 20_000,
    });
  }

  it('needs Debian\'s python3-seccomp (.ci/run installs it)', () => {
    const probe = spawnSync('/usr/bin/python3', ['-c', 'import seccomp'], { encoding: 'utf8' });
    expect([probe.status, probe.stderr]).toEqual([0, '']);
  });

  it('lets bubblewrap build the sandbox as uid 10001 under the shipped profile; Docker\'s default profile stops it', () => {
    const project = renderCompose(CREDENTIALS);
    const profileFile = path.resolve(project.dir, securityOptions(project.services.worker).seccomp);
    const scratch = mkdtempSync(path.join(tmpdir(), 'hecate-seccomp-'));
    const workspace = path.join(scratch, 'ws');
    chmodSync(scratch, 0o755); // the image's user reaches its workspace through it
    mkdirSync(workspace);
    chownSync(workspace, Number(IMAGE_UID), Number(IMAGE_UID));

    const isolated = bwrapUnder(profileFile, workspace);
    expect([isolated.status, isolated.stderr]).toEqual([0, '']);
    // Its own PID namespace (bubblewrap's init is 1, the shell 2), as the image's user; the workspace writable.
    expect(isolated.stdout).toBe('uid 10001, pid 2\n');
    expect(existsSync(path.join(workspace, 'made-here'))).toBe(true);

    const profile = readSeccompProfile(profileFile);
    const dockerDefault = path.join(scratch, 'docker-default.json');
    writeFileSync(dockerDefault, JSON.stringify({ ...profile, syscalls: profile.syscalls.filter((rule) => !rule.comment?.startsWith('Hecate worker')) }));
    const refused = bwrapUnder(dockerDefault, workspace);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^bwrap: No permissions to create new namespace/);
  });
});

describe('Compose interpolation (test/support/compose.ts)', () => {
  const env = { SET: 'v', EMPTY: '' };
  it.each([
    ['${SET:-d}', 'v'],
    ['${EMPTY:-d}', 'd'],
    ['${EMPTY-d}', ''],
    ['${UNSET-d}', 'd'],
    ['${SET:+alt}', 'alt'],
    ['${EMPTY+alt}', 'alt'],
    ['${UNSET:+alt}', ''],
    ['$SET/$$SET', 'v/$SET'],
    ['${UNSET:-${SET}x}', 'vx'],
  ])('%s → %s', (text, expected) => {
    expect(interpolate(text, env)).toBe(expected);
  });

  it('fails on a required variable, with its message, and on a malformed expression', () => {
    expect(() => interpolate('${EMPTY:?say why}', env)).toThrow('required variable EMPTY is missing a value: say why');
    expect(interpolate('${EMPTY?say why}', env)).toBe('');
    expect(() => interpolate('${SET', env, 'x')).toThrow(/invalid interpolation format for x/);
    expect(() => interpolate('${SET!}', env, 'x')).toThrow(/invalid interpolation format/);
  });
});
