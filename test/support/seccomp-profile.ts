// A Docker seccomp profile (the JSON `--security-opt seccomp=<file>` takes) read the way the engine applies it to a
// container: rules kept or dropped by their `includes`/`excludes` (the container's capabilities, architecture,
// kernel), then a system call's action is that of the kept rules whose argument conditions hold, else the default.
import { readFileSync } from 'node:fs';

export interface SeccompArg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}

export interface SeccompRule {
  names: string[];
  action: string;
  errnoRet?: number;
  args?: SeccompArg[] | null;
  comment?: string;
  includes?: { caps?: string[]; arches?: string[]; minKernel?: string };
  excludes?: { caps?: string[]; arches?: string[]; minKernel?: string };
}

export interface SeccompProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  archMap?: Array<{ architecture: string; subArchitectures?: string[] }>;
  syscalls: SeccompRule[];
}

/** What a container gets without `cap_add`/`cap_drop` (the engine's default capability set). */
export const DOCKER_DEFAULT_CAPS = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];

export interface Container {
  caps: string[];
  /** Docker's architecture name (`amd64`, `arm64`, …). */
  arch: string;
  kernel: string;
}

export const DEFAULT_CONTAINER: Container = { caps: DOCKER_DEFAULT_CAPS, arch: 'amd64', kernel: '6.1' };

export function readSeccompProfile(file: string): SeccompProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as SeccompProfile;
  if (typeof profile.defaultAction !== 'string' || !Array.isArray(profile.syscalls)) {
    throw new Error(`${file}: not a Docker seccomp profile (defaultAction and syscalls are required)`);
  }
  return profile;
}

const kernelAtLeast = (kernel: string, min: string): boolean => {
  const [a, b] = [kernel, min].map((v) => v.split('.').map(Number));
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
};

/** Whether the engine installs the rule for this container (moby's profile loader). */
function applies(rule: SeccompRule, container: Container): boolean {
  const { includes = {}, excludes = {} } = rule;
  if (includes.caps?.some((cap) => !container.caps.includes(cap))) return false;
  if (includes.arches && !includes.arches.includes(container.arch)) return false;
  if (includes.minKernel && !kernelAtLeast(container.kernel, includes.minKernel)) return false;
  if (excludes.caps?.some((cap) => container.caps.includes(cap))) return false;
  if (excludes.arches?.includes(container.arch)) return false;
  if (excludes.minKernel && kernelAtLeast(container.kernel, excludes.minKernel)) return false;
  return true;
}

function holds(arg: SeccompArg, args: number[]): boolean {
  const x = BigInt(args[arg.index] ?? 0);
  const value = BigInt(arg.value);
  switch (arg.op) {
    case 'SCMP_CMP_NE':
      return x !== value;
    case 'SCMP_CMP_LT':
      return x < value;
    case 'SCMP_CMP_LE':
      return x <= value;
    case 'SCMP_CMP_EQ':
      return x === value;
    case 'SCMP_CMP_GE':
      return x >= value;
    case 'SCMP_CMP_GT':
      return x > value;
    case 'SCMP_CMP_MASKED_EQ':
      return (x & value) === BigInt(arg.valueTwo ?? 0);
    default:
      throw new Error(`unknown seccomp comparison ${arg.op}`);
  }
}

export interface Verdict {
  action: string;
  errno?: number;
}

/** The action the profile takes for `syscall(args…)` in `container`. Two matching rules that disagree are an error. */
export function seccompVerdict(profile: SeccompProfile, syscall: string, args: number[] = [], container = DEFAULT_CONTAINER): Verdict {
  const matched = profile.syscalls
    .filter((rule) => rule.names.includes(syscall) && applies(rule, container))
    .filter((rule) => (rule.args ?? []).every((arg) => holds(arg, args)))
    .map((rule): Verdict => ({ action: rule.action, ...(rule.action === 'SCMP_ACT_ERRNO' ? { errno: rule.errnoRet ?? 1 } : {}) }));
  const distinct = [...new Set(matched.map((v) => JSON.stringify(v)))];
  if (distinct.length > 1) throw new Error(`${syscall}: rules disagree (${distinct.join(', ')})`);
  if (distinct.length === 1) return matched[0];
  return { action: profile.defaultAction, ...(profile.defaultAction === 'SCMP_ACT_ERRNO' ? { errno: profile.defaultErrnoRet ?? 1 } : {}) };
}

/** clone(2)/unshare(2) flags. */
export const CLONE = {
  NEWNS: 0x00020000,
  NEWCGROUP: 0x02000000,
  NEWUTS: 0x04000000,
  NEWIPC: 0x08000000,
  NEWUSER: 0x10000000,
  NEWPID: 0x20000000,
  NEWNET: 0x40000000,
  SIGCHLD: 17,
  /** What glibc's pthread_create passes (no namespace): CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID. */
  THREAD: 0x003d0f00,
};
