# seccomp-exec.py PROFILE COMMAND...: loads a Docker seccomp profile the way the engine does for a container with
# Docker's default capabilities on amd64 (rules kept or dropped by includes/excludes; names this libseccomp does not
# know skipped, as the engine skips them), then execs COMMAND under it (the filter is inherited across exec).
# Debian's python3-seccomp (libseccomp's own bindings); .ci/run installs it.
import json, os, sys, seccomp
CAPS = {'CAP_CHOWN','CAP_DAC_OVERRIDE','CAP_FSETID','CAP_FOWNER','CAP_MKNOD','CAP_NET_RAW','CAP_SETGID','CAP_SETUID','CAP_SETFCAP','CAP_SETPCAP','CAP_NET_BIND_SERVICE','CAP_SYS_CHROOT','CAP_KILL','CAP_AUDIT_WRITE'}
OPS = {'SCMP_CMP_NE': seccomp.NE,'SCMP_CMP_LT': seccomp.LT,'SCMP_CMP_LE': seccomp.LE,'SCMP_CMP_EQ': seccomp.EQ,'SCMP_CMP_GE': seccomp.GE,'SCMP_CMP_GT': seccomp.GT,'SCMP_CMP_MASKED_EQ': seccomp.MASKED_EQ}
def action(name, errno):
    return seccomp.ALLOW if name == 'SCMP_ACT_ALLOW' else seccomp.ERRNO(errno)
def main():
    profile = json.load(open(sys.argv[1]))
    f = seccomp.SyscallFilter(defaction=action(profile['defaultAction'], profile.get('defaultErrnoRet', 1)))
    for rule in profile['syscalls']:
        inc, exc = rule.get('includes', {}), rule.get('excludes', {})
        if any(c not in CAPS for c in inc.get('caps', [])): continue
        if 'arches' in inc and 'amd64' not in inc['arches']: continue
        if any(c in CAPS for c in exc.get('caps', [])): continue
        if 'amd64' in exc.get('arches', []): continue
        act = action(rule['action'], rule.get('errnoRet', 1))
        args = [seccomp.Arg(a['index'], OPS[a['op']], a['value'], a.get('valueTwo', 0)) for a in (rule.get('args') or [])]
        for name in rule['names']:
            try:
                f.add_rule(act, name, *args)
            except (ValueError, RuntimeError):
                pass  # a name this libseccomp does not know (Docker skips those too)
    f.load()
    os.execvp(sys.argv[2], sys.argv[2:])
main()
