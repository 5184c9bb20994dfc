#!/usr/bin/env python3
"""kestrel record -p / -a / --attach: programs sampled from outside (src/attach).

1. A running program with two "worker" threads (built with frame pointers and without)
   attached for 2 s: the share of alpha against beta in the workers' samples is within
   two standard errors of the share the program timed on its threads' CPU clocks; the
   "late" thread made during the recording has samples in gamma_; the on-CPU stacks
   reach their roots; every export is written.
2. A static program (gcc -static, no .eh_frame_hdr) by -p and by --attach, and a Go
   program: named stacks reaching their roots; `record -- STATIC` says --attach is the
   way.
3. A process that ends during the recording: kestrel ends with it and reports it;
   --children follows the processes a target forks after the start; JIT code is named
   from the target's /tmp/perf-PID.map; a process asleep
   through the whole recording has its waiting samples, its stack read at the start.
4. A process in another mount namespace (unshare -m, its binary on a private tmpfs):
   its stacks are named, from the copy kestrel took through /proc/PID/map_files.
5. -a for 1 s with two programs running: both are in the recording, named.
6. Errors, one line and a non-zero exit each: a pid that does not exist, kestrel's own
   pid, a kernel thread, an unprivileged user against root's process (and the same user
   sampling its own process, its main thread's waiting samples read from /proc, as the
   report says); a set-user-ID
   program: `record --` says --attach is the way, and --attach samples it. Reading
   the target's memory refused (process_vm_readv, as Yama's ptrace_scope refuses it;
   Yama itself where the kernel has it): one line naming it and what to change.
7. SIGINT to kestrel ends the recording and writes everything; SIGKILL of kestrel
   leaves the target running, and it ends as it would have.
"""
import glob, json, math, os, pwd, random, shutil, signal, subprocess, sys, tempfile, time

KESTREL = os.path.abspath("build/bin/kestrel")
KESTREL_SAN = os.path.abspath("build/bin/kestrel-san")  # the CLI under ASan and UBSan
PROGS = os.path.abspath("build/tests/attach")
GOSRC = os.path.abspath("tests/attach/goprog")
EXPORTS = (".speedscope.json", ".cpuprofile", ".folded", ".profile.json", ".pb.gz", ".html")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
    print(("ok:   " if cond else "FAIL: ") + what, flush=True)


def folded(stem):
    out = {}
    if os.path.exists(stem + ".folded"):
        for line in open(stem + ".folded"):
            stack, _, n = line.rstrip("\n").rpartition(" ")
            out[stack] = out.get(stack, 0) + int(n)
    return out


def raws(stem):
    return [json.load(open(f)) for f in glob.glob(stem + ".raw/*.raw.json")]


def record(args, stem, timeout=60, k=KESTREL):
    return subprocess.run([k, "record", "-o", stem, "--report=" + stem + ".txt"] + args,
                          capture_output=True, text=True, timeout=timeout)


def start(cmd, **kw):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, **kw)
    time.sleep(0.3)
    return p


def whole_share(raw):
    """Share of on-CPU samples whose stack's walk reached the root."""
    whole = {0, 1, 8}
    ends = raw["stack_ends"]
    cpu = [s for s in raw["samples"] if s[3] == 0]
    return sum(1 for s in cpu if ends[s[2]] in whole) / max(1, len(cpu)), len(cpu)


def truth_test(tmp, build):
    p = start([os.path.join(PROGS, "prog_" + build), "3.5"])
    stem = os.path.join(tmp, build)
    r = record(["-p", str(p.pid), "--duration", "2"], stem)
    out, _ = p.communicate(timeout=60)
    check(r.returncode == 0, f"{build}: -p for 2 s exits 0 ({r.returncode}: {r.stderr.strip()[-300:]})")
    check(all(os.path.exists(stem + e) for e in EXPORTS), f"{build}: every export written")
    a_ns, b_ns, g_ns = map(int, out.split())
    f = folded(stem)
    a = sum(n for s, n in f.items() if s.startswith("worker-") and ";alpha;" in s + ";")
    b = sum(n for s, n in f.items() if s.startswith("worker-") and ";beta;" in s + ";")
    g = sum(n for s, n in f.items() if s.startswith("late-") and ";gamma_;" in s + ";")
    p_true = a_ns / (a_ns + b_ns)
    n = a + b
    se = math.sqrt(p_true * (1 - p_true) / max(1, n))
    p_hat = a / max(1, n)
    check(n >= 200 and abs(p_hat - p_true) <= 2 * se,
          f"{build}: alpha's share {p_hat:.3f} of {n} worker samples, truth {p_true:.3f} "
          f"(2 SE {2 * se:.3f})")
    check(g >= 20, f"{build}: the thread made during the recording has {g} samples in gamma_")
    raw = raws(stem)
    share, ncpu = whole_share(raw[0]) if raw else (0, 0)
    check(share >= 0.95, f"{build}: {share:.1%} of {ncpu} on-CPU stacks reach their root")


def static_and_go(tmp):
    prog = os.path.join(PROGS, "prog_static")
    p = start([prog, "2.5"])
    stem = os.path.join(tmp, "static")
    r = record(["-p", str(p.pid), "--duration", "1.5"], stem)
    p.communicate(timeout=60)
    f = folded(stem)
    named = sum(n for s, n in f.items() if s.endswith(";alpha;burn") and "start_thread" in s)
    total = sum(n for s, n in f.items() if s.endswith("burn"))
    named += sum(n for s, n in f.items() if s.endswith(";beta;burn") and "start_thread" in s)
    named += sum(n for s, n in f.items() if s.endswith(";gamma_;burn") and "start_thread" in s)
    check(r.returncode == 0 and total >= 50 and named >= 0.95 * total,
          f"static -p: {named} of {total} burn samples named up to start_thread")
    stem = os.path.join(tmp, "static_attach")
    r = record(["--attach", "--", prog, "1.5"], stem, k=KESTREL_SAN)
    f = folded(stem)
    ok = sum(n for s, n in f.items() if s.endswith(";burn") and "start_thread;worker;" in s)
    check(r.returncode == 0 and ok >= 50, f"static --attach: {ok} burn samples under start_thread;worker")
    r = subprocess.run([KESTREL, "record", "-o", os.path.join(tmp, "st_pre"), "--", prog, "0.2"],
                       capture_output=True, text=True, timeout=60)
    check("--attach" in r.stderr, "record -- STATIC says --attach is the way: " + r.stderr.strip()[-160:])
    # Go: frame pointers, its own stacks.
    gobin = os.path.join(tmp, "goprog")
    env = dict(os.environ, GOCACHE=os.path.join(tmp, "gocache"), GOFLAGS="-mod=mod",
               CGO_ENABLED="0")
    b = subprocess.run(["go", "build", "-o", gobin, "."], cwd=GOSRC, env=env,
                       capture_output=True, text=True, timeout=600)
    check(b.returncode == 0, "the Go program builds: " + b.stderr.strip()[-200:])
    if b.returncode:
        return
    p = start([gobin, "2.5"])
    stem = os.path.join(tmp, "go")
    r = record(["-p", str(p.pid), "--duration", "1.5"], stem)
    p.communicate(timeout=60)
    f = folded(stem)
    burn = sum(n for s, n in f.items() if s.endswith(";main.burn"))
    # main.burn is a leaf without a frame of its own: by frame pointer its caller is not
    # seen (as with perf record --call-graph fp), the goroutine's root is.
    rooted = sum(n for s, n in f.items() if s.endswith(";main.burn") and
                 (";runtime.goexit;runtime.main;" in s or ";runtime.goexit;main.burn" in s))
    check(r.returncode == 0 and burn >= 50 and rooted >= 0.95 * burn,
          f"Go: {rooted} of {burn} main.burn samples reach runtime.goexit "
          f"({r.returncode}: {r.stderr.strip()[-200:]})")


def exits_during(tmp):
    # 1.5 s: time for the sanitized kestrel to start and attach on a loaded machine (at
    # 0.6 s the program had ended before it attached, once, beside a full test run).
    p = start([os.path.join(PROGS, "prog_nofp"), "1.5"])
    stem = os.path.join(tmp, "exits")
    t0 = time.time()
    r = record(["-p", str(p.pid), "--duration", "20"], stem, k=KESTREL_SAN)
    took = time.time() - t0
    p.communicate(timeout=60)
    f = folded(stem)
    n = sum(n for s, n in f.items() if s.endswith(";burn"))
    check(r.returncode == 0 and took < 10 and n > 20,
          f"a process ending during the recording: kestrel ended after {took:.1f} s with {n} burn samples")


def blocked_throughout(tmp):
    """A process asleep for the whole recording (Debian's sleep: no frame pointers):
    its waiting samples, one per 1/hz, with the stack read from /proc at the start."""
    p = subprocess.Popen(["sleep", "30"])
    time.sleep(0.2)
    stem = os.path.join(tmp, "asleep")
    r = record(["-p", str(p.pid), "--duration", "1", "--state", "waiting"], stem)
    p.kill()
    p.wait()
    f = folded(stem)
    n = sum(n for s, n in f.items() if "clock_nanosleep" in s and "__libc_start_main" in s)
    check(r.returncode == 0 and 900 <= n <= 1100,
          f"a thread blocked through the whole recording: {n} waiting samples under "
          f"__libc_start_main;...;clock_nanosleep (997 expected)")


def jit(tmp):
    """JIT code named from the target's /tmp/perf-PID.map, copied beside the profile."""
    p = start([os.path.join(PROGS, "prog_jit"), "2.5"])
    stem = os.path.join(tmp, "jit")
    r = record(["-p", str(p.pid), "--duration", "1"], stem)
    p.communicate(timeout=60)
    f = folded(stem)
    n = sum(n for s, n in f.items() if s.endswith(";jit_countdown"))
    total = sum(f.values())
    check(r.returncode == 0 and n >= 0.5 * total and n > 20 and
          os.path.exists(stem + ".raw/%d.perf.map" % p.pid),
          f"JIT code: {n} of {total} samples named jit_countdown from the perf map")


def children(tmp):
    p = start([os.path.join(PROGS, "prog_forker")])
    stem = os.path.join(tmp, "children")
    r = record(["-p", str(p.pid), "--children"], stem)
    p.communicate(timeout=60)
    got = raws(stem)
    kids = [x for x in got if x["ppid"] == p.pid and
            sum(1 for s in x["samples"] if s[3] == 0) > 20]
    f = folded(stem)
    n = sum(n for s, n in f.items() if s.endswith(";main;child_work"))
    check(r.returncode == 0 and len(kids) == 2 and n > 40,
          f"--children: {len(kids)} children forked after the start recorded, {n} samples in child_work")


def mount_ns(tmp):
    d = tempfile.mkdtemp(dir=tmp)
    prog = os.path.join(PROGS, "prog_nofp")
    p = subprocess.Popen(["unshare", "-m", "sh", "-c",
                          f"mount -t tmpfs none {d} && cp {prog} {d}/private && exec {d}/private 3"],
                         stdout=subprocess.PIPE, text=True)
    time.sleep(0.6)
    check(not os.path.exists(os.path.join(d, "private")), "the binary is not visible outside its namespace")
    stem = os.path.join(tmp, "ns")
    r = record(["-p", str(p.pid), "--duration", "1"], stem)
    p.communicate(timeout=60)
    f = folded(stem)
    n = sum(n for s, n in f.items() if s.endswith(";alpha;burn") or s.endswith(";beta;burn"))
    copies = glob.glob(stem + ".raw/images/*/private")
    check(r.returncode == 0 and n > 20 and copies,
          f"another mount namespace: {n} named samples, image copied to {copies}")


def whole_machine(tmp):
    a = start([os.path.join(PROGS, "prog_fp"), "3"])
    b = start([os.path.join(PROGS, "prog_static"), "3"])
    stem = os.path.join(tmp, "all")
    r = record(["-a", "--duration", "1"], stem, timeout=120)
    a.communicate(timeout=60)
    b.communicate(timeout=60)
    got = {x["pid"]: x for x in raws(stem)}
    check(r.returncode == 0, f"-a --duration 1 exits 0: {r.stderr.strip()[-200:]}")
    for p in (a, b):
        x = got.get(p.pid)
        check(x is not None and len(x["samples"]) > 10,
              f"-a: pid {p.pid} recorded ({len(x['samples']) if x else 0} samples)")
    f = folded(stem)
    named = sum(n for s, n in f.items() if s.endswith(";alpha;burn"))
    check(named > 10, f"-a: {named} samples named ...;alpha;burn")
    r2 = subprocess.run([KESTREL, "report", "--process", str(a.pid), stem + ".raw"],
                        capture_output=True, text=True, timeout=120)
    check(r2.returncode == 0 and "alpha" in r2.stdout and str(b.pid) not in r2.stdout,
          "-a: --process picks one process of the recording")


def errors(tmp):
    def one(args, want, what, **kw):
        r = subprocess.run([KESTREL, "record"] + args, capture_output=True, text=True, timeout=60, **kw)
        lines = r.stderr.strip().splitlines()
        check(r.returncode != 0 and len(lines) == 1 and want in lines[0],
              f"{what}: exit {r.returncode}, {lines}")
    dead = subprocess.Popen(["true"])
    dead.wait()
    one(["-p", str(dead.pid), "-o", os.path.join(tmp, "e1")], "no such process", "a pid that does not exist")
    one(["-p", "2", "-o", os.path.join(tmp, "e2")], "kernel thread", "a kernel thread")
    r = subprocess.run(["sh", "-c", f'exec {KESTREL} record -p $$ -o {tmp}/e3'],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "kestrel itself" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          f"kestrel's own pid: {r.stderr.strip()}")
    # An unprivileged user against root's process.
    user = "kestrel_t%d" % random.randrange(10**6)
    made = subprocess.run(["useradd", "-M", "-s", "/bin/sh", user], capture_output=True).returncode == 0
    check(made, "a test user " + user)
    if not made:
        return
    try:
        victim = subprocess.Popen(["sleep", "30"])
        d = tempfile.mkdtemp()
        os.chmod(d, 0o777)
        r = subprocess.run(["runuser", "-u", user, "--", KESTREL, "record", "-p", str(victim.pid),
                            "--duration", "1", "-o", d + "/u"], capture_output=True, text=True,
                           timeout=60)
        lines = r.stderr.strip().splitlines()
        check(r.returncode != 0 and len(lines) == 1 and "permission denied" in lines[0] and
              "another user" in lines[0] and not os.listdir(d),
              f"unprivileged against root's process: exit {r.returncode}, {lines}, left {os.listdir(d)}")
        victim.kill()
        victim.wait()
        # The same user against its own process (perf_event_paranoid 2 allows it): on-CPU
        # samples; without the kernel's switch samples, waiting samples for what still
        # waits when kestrel reads it (the main thread, in usleep at the start, then in
        # pthread_join to the end: every 1/hz of the second), and the report says which
        # waiting time is sampled.
        prog = os.path.join(d, "own")
        shutil.copy(os.path.join(PROGS, "prog_nofp"), prog)
        os.chmod(prog, 0o755)
        paranoid = lambda: int(open("/proc/sys/kernel/perf_event_paranoid").read())
        before = paranoid()
        r = subprocess.run(["runuser", "-u", user, "--", "sh", "-c",
                            f"{prog} 2 >/dev/null & sleep 0.3; exec {KESTREL} record -p $! "
                            f"--duration 1 -o {d}/own --report={d}/own.txt"],
                           capture_output=True, text=True, timeout=60)
        f = folded(d + "/own")
        n = sum(n for s, n in f.items() if s.endswith(";alpha;burn"))
        rep = open(d + "/own.txt").read() if os.path.exists(d + "/own.txt") else ""
        # The setting is the machine's: at 1 or below the user may sample waiting time.
        said = "waiting time is sampled only" in rep
        rw = raws(d + "/own")
        joins = 0
        if rw:
            main_thr = {i for i, th in enumerate(rw[0]["threads"]) if th.get("label") == "main"}
            joins = sum(1 for x in rw[0]["samples"] if x[3] == 1 and x[1] in main_thr)
        check(r.returncode == 0 and n > 20 and 800 <= joins <= 1100 and
              (said if before >= 2 and paranoid() >= 2 else not said),
              f"unprivileged, its own process: exit {r.returncode}, {n} samples ...;alpha;burn, "
              f"{joins} waiting samples of the main thread (usleep, pthread_join: 997 expected), "
              f"the report says which waiting time has no stack (perf_event_paranoid {before})" +
              ("" if "waiting time" in rep else " (report: " + rep[-400:] + ")"))
        # A set-user-ID program (owned by the test user, so that it changes ids when
        # root runs it): the runtime cannot enter it, --attach samples it.
        suid = os.path.join(d, "suid")
        shutil.copy(os.path.join(PROGS, "prog_nofp"), suid)
        os.chown(suid, pwd.getpwnam(user).pw_uid, -1)
        os.chmod(suid, 0o4755)
        r = subprocess.run([KESTREL, "record", "-o", d + "/pre", "--", suid, "0.3"],
                           capture_output=True, text=True, timeout=60)
        # The program runs unprofiled and kestrel exits with its status (0), saying why
        # in one line and leaving no report behind.
        lines = [l for l in r.stderr.splitlines() if l.startswith("kestrel:")]
        check(r.returncode == 0 and len(lines) == 1 and "set-user-ID" in lines[0] and
              "--attach" in lines[0] and not glob.glob(d + "/pre.*"),
              "record -- SETUID runs it, exits 0 and says --attach is the way: (exit %d) %s" %
              (r.returncode, r.stderr.strip()[-160:]))
        stem = d + "/suid_attach"
        r = record(["--attach", "--", suid, "1.2"], stem)
        f = folded(stem)
        n = sum(n for s, n in f.items() if s.endswith(";alpha;burn") and "start_thread" in s)
        check(r.returncode == 0 and n > 20,
              f"--attach samples a set-user-ID program: {n} samples ...;alpha;burn ({r.stderr.strip()[-120:]})")
        shutil.rmtree(d, ignore_errors=True)
    finally:
        subprocess.run(["userdel", user], capture_output=True)


def reads_refused(tmp):
    """process_vm_readv refused while the perf events are allowed (what Yama's
    kernel.yama.ptrace_scope does to a process kestrel did not start): one line naming
    the refusal and what to change, and the recording goes on with the copies alone."""
    noreadv = os.path.join(PROGS, "prog_noreadv")
    p = start([os.path.join(PROGS, "prog_deep"), "2"])
    stem = os.path.join(tmp, "noreadv")
    r = subprocess.run([noreadv, KESTREL, "record", "-p", str(p.pid), "--duration", "1",
                        "-o", stem, "--report=" + stem + ".txt"],
                       capture_output=True, text=True, timeout=60)
    p.communicate(timeout=60)
    lines = [l for l in r.stderr.splitlines() if "process_vm_readv" in l]
    rep = open(stem + ".txt").read() if os.path.exists(stem + ".txt") else ""
    check(r.returncode == 0 and len(lines) == 1 and f"-p {p.pid}: reading its memory refused" in lines[0]
          and "CAP_SYS_PTRACE" in lines[0] and "process_vm_readv refused" in rep and
          sum(folded(stem).values()) > 20,
          f"process_vm_readv refused: exit {r.returncode}, said {lines}, noted in the report, "
          f"{sum(folded(stem).values())} samples")
    # --attach: the program kestrel starts, the same line naming it.
    stem = os.path.join(tmp, "noreadv_attach")
    deep = os.path.join(PROGS, "prog_deep")
    r = subprocess.run([noreadv, KESTREL, "record", "-o", stem, "--report=" + stem + ".txt",
                        "--attach", "--", deep, "1"], capture_output=True, text=True, timeout=60)
    lines = [l for l in r.stderr.splitlines() if "process_vm_readv" in l]
    check(r.returncode == 0 and len(lines) == 1 and
          lines[0].startswith(f"kestrel: {deep}: reading its memory refused"),
          f"process_vm_readv refused, --attach: exit {r.returncode}, said {lines}")
    # Yama itself, where the kernel has it: an unprivileged user's own process, not
    # started by kestrel, at ptrace_scope 1.
    scope_path = "/proc/sys/kernel/yama/ptrace_scope"
    if not os.path.exists(scope_path):
        print("skip: this kernel has no Yama (" + scope_path + ")")
        return
    user = "kestrel_y%d" % random.randrange(10**6)
    if subprocess.run(["useradd", "-M", "-s", "/bin/sh", user], capture_output=True).returncode:
        check(False, "a test user " + user)
        return
    before = open(scope_path).read().strip()
    d = tempfile.mkdtemp()
    os.chmod(d, 0o777)
    try:
        with open(scope_path, "w") as f:
            f.write("1")
        prog = os.path.join(d, "deep")
        shutil.copy(os.path.join(PROGS, "prog_deep"), prog)
        os.chmod(prog, 0o755)
        r = subprocess.run(["runuser", "-u", user, "--", "sh", "-c",
                            f"{prog} 2 >/dev/null & sleep 0.3; exec {KESTREL} record -p $! "
                            f"--duration 1 -o {d}/y --report={d}/y.txt"],
                           capture_output=True, text=True, timeout=60)
        lines = [l for l in r.stderr.splitlines() if "process_vm_readv" in l]
        check(len(lines) == 1 and "ptrace_scope is 1" in lines[0] and
              "kernel.yama.ptrace_scope=0" in lines[0],
              f"Yama at 1, an unprivileged user's own process: {lines or r.stderr.strip()[-300:]}")
    finally:
        with open(scope_path, "w") as f:
            f.write(before)
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def signals(tmp):
    p = start([os.path.join(PROGS, "prog_nofp"), "4"])
    stem = os.path.join(tmp, "sigint")
    k = subprocess.Popen([KESTREL, "record", "-p", str(p.pid), "-o", stem, "--report=" + stem + ".txt"],
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1.2)
    k.send_signal(signal.SIGINT)
    rc = k.wait(timeout=60)
    alive = p.poll() is None
    check(rc == 0 and all(os.path.exists(stem + e) for e in EXPORTS) and
          os.path.getsize(stem + ".txt") > 0 and alive,
          f"SIGINT ends the recording (exit {rc}), every export written, the target still runs")
    out, _ = p.communicate(timeout=60)
    check(p.returncode == 0 and len(out.split()) == 3, "the target then ends as it would")
    p = start([os.path.join(PROGS, "prog_nofp"), "3"])
    k = subprocess.Popen([KESTREL, "record", "-p", str(p.pid), "-o", os.path.join(tmp, "sigkill")],
                         stderr=subprocess.DEVNULL)
    time.sleep(1)
    k.kill()
    k.wait()
    time.sleep(0.2)
    check(p.poll() is None, "SIGKILL of kestrel leaves the target running")
    out, _ = p.communicate(timeout=60)
    vals = out.split()
    check(p.returncode == 0 and len(vals) == 3 and int(vals[0]) > 0,
          f"... and it ends normally with its output ({p.returncode}, {out.strip()})")


def main():
    if os.geteuid() != 0:
        print("FAIL: these tests need root (-a, unshare -m, a test user)")
        return 1
    tmp = tempfile.mkdtemp(prefix="kestrel-attach-")
    try:
        truth_test(tmp, "fp")
        truth_test(tmp, "nofp")
        static_and_go(tmp)
        exits_during(tmp)
        children(tmp)
        blocked_throughout(tmp)
        jit(tmp)
        mount_ns(tmp)
        whole_machine(tmp)
        errors(tmp)
        reads_refused(tmp)
        signals(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failed" % failures if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
