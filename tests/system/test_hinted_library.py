"""A shared library built by `foresight cc` used by programs built without it: linked
(the runtime then loads after the C library), opened and closed with dlopen, opened
on a thread whose main then calls pthread_exit, and the runtime's report under a
seccomp filter.  Each program must behave as its build with plain cc does."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

LIB = r"""
double lib_sum(const double *a, long n) {
    double s = 0;
    for (long i = 0; i < n; i++) s += a[i];
    return s;
}
void lib_scale(double *a, long n, double k) {
    for (long i = 0; i < n; i++) a[i] = a[i] * k + 1.0;
}
"""
MAP = "{ global: lib_sum; lib_scale; local: *; };\n"

LINKED = r"""
#include <stdio.h>
#include <stdlib.h>
double lib_sum(const double *, long);
void lib_scale(double *, long, double);
int main(void) {
    long n = 1L << 20; double *a = malloc(n * sizeof *a);
    for (long i = 0; i < n; i++) a[i] = (double)(i % 1000);
    lib_scale(a, n, 2.0);
    printf("sum=%.1f\n", lib_sum(a, n));
    return 0;
}
"""

OPENED = r"""
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static const char *path;
static void *use(void *close_it) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen failed\n"); exit(3); }
    double (*sum)(const double *, long) = (double (*)(const double *, long))dlsym(h, "lib_sum");
    void (*scale)(double *, long, double) = (void (*)(double *, long, double))dlsym(h, "lib_scale");
    long n = 1L << 20; double *a = malloc(n * sizeof *a);
    for (long i = 0; i < n; i++) a[i] = (double)(i % 1000);
    for (int r = 0; r < 3; r++) scale(a, n, 0.5);
    printf("sum=%.3f\n", sum(a, n));
    if (close_it) dlclose(h);
    return NULL;
}
static void bye(void) { printf("at exit\n"); }
int main(int argc, char **argv) {
    path = argv[1];
    atexit(bye);
    if (argv[2][0] == 'c') {        /* opened, used, closed; the program goes on */
        use(argv);
        usleep(50000);
        return 0;
    }
    pthread_t t;                     /* opened on a thread; main ends with pthread_exit */
    pthread_create(&t, NULL, use, NULL);
    pthread_exit(NULL);
}
"""


def _build(tmp_path: Path, cc: str):
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "lib.map").write_text(MAP)
    for name, text in (("linked.c", LINKED), ("opened.c", OPENED)):
        (tmp_path / name).write_text(text)
    libs = {}
    for kind, compiler in (("hinted", [FORESIGHT, "cc"]), ("plain", [cc])):
        so = tmp_path / f"lib{kind}.so"
        subprocess.run([*compiler, "-O2", "-shared", "-fPIC", str(tmp_path / "lib.c"),
                        f"-Wl,--version-script={tmp_path / 'lib.map'}", "-o", str(so)],
                       check=True)
        libs[kind] = so
    return libs


def _run(args, env=None, timeout=60):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "FORESIGHT_INCORE": "hint", **(env or {})})


def test_a_hinted_library_linked_by_a_plain_program(cc, tmp_path):
    # The runtime is a dependency of the library, loaded after the C library: the
    # definitions it looks up behind its own come from the default lookup instead.
    libs = _build(tmp_path, cc)
    out = {}
    for kind, so in libs.items():
        exe = tmp_path / f"linked_{kind}"
        subprocess.run([cc, "-O2", str(tmp_path / "linked.c"), str(so),
                        f"-Wl,-rpath,{tmp_path}", "-o", str(exe)], check=True)
        r = _run([str(exe)], {"FORESIGHT_STATS": "1"})
        assert r.returncode == 0, r.stderr
        out[kind] = r.stdout
    assert out["hinted"] == out["plain"] == "sum=1048331776.0\n"


def test_a_hinted_library_closed_stays_loaded(cc, tmp_path):
    # The runtime keeps the library's sites (a queued request, the report at exit).
    libs = _build(tmp_path, cc)
    exe = tmp_path / "opened"
    subprocess.run([cc, "-O2", str(tmp_path / "opened.c"), "-o", str(exe), "-ldl",
                    "-lpthread"], check=True)
    want = _run([str(exe), str(libs["plain"]), "c"])
    assert want.returncode == 0
    for _ in range(5):
        r = _run([str(exe), str(libs["hinted"]), "c"], {"FORESIGHT_STATS": "1"})
        assert (r.returncode, r.stdout) == (0, want.stdout), r.stderr


def test_main_ends_with_pthread_exit_after_a_thread_started_the_runtime(cc, tmp_path):
    # The library was opened on another thread, so the main thread's end is looked at
    # each second: the process ends with the program's last thread, its output flushed.
    libs = _build(tmp_path, cc)
    exe = tmp_path / "opened"
    subprocess.run([cc, "-O2", str(tmp_path / "opened.c"), "-o", str(exe), "-ldl",
                    "-lpthread"], check=True)
    start = time.monotonic()
    r = _run([str(exe), str(libs["hinted"]), "t"], timeout=30)
    assert (r.returncode, r.stdout) == (0, "sum=67290208.000\nat exit\n"), r.stderr
    assert time.monotonic() - start < 10


SECCOMP = r"""
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    long n = 1L << 18; double *a = malloc(n * sizeof *a), s = 0;
    for (long i = 0; i < n; i++) a[i] = i;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
        return 2;
    for (long i = 0; i < n; i++) s += a[i];
    printf("after=%.0f\n", s);
    return 0;
}
"""


@pytest.mark.parametrize("option", ["--no-prefetch", None])
def test_no_report_opened_under_the_program_s_seccomp_filter(cc, tmp_path, option):
    # Opening the report would be killed by the filter: the program ends as gcc's does.
    src = tmp_path / "f.c"
    src.write_text(SECCOMP)
    exe = tmp_path / "f"
    subprocess.run([FORESIGHT, "cc", "-O2", *([option] if option else []), str(src), "-o",
                    str(exe)], check=True)
    for stats in ("1", str(tmp_path / "s.json")):
        r = _run([str(exe)], {"FORESIGHT_STATS": stats})
        assert (r.returncode, r.stdout) == (0, "after=34359607296\n"), r.stderr


UNSHARE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
double a[1 << 20];
int main(void) {
    int rc = unshare(CLONE_NEWUSER);   /* first thing: the runtime's threads just made */
    printf("unshare=%d %s\n", rc, rc ? strerror(errno) : "");
    double s = 0;
    for (long i = 0; i < (1 << 20); i++) s += a[i];
    printf("%.0f\n", s);
    return 0;
}
"""


def test_a_user_namespace_as_the_program_starts(cc, tmp_path):
    # The library's threads made at start-up but not yet running are ended first too
    # (alone.c): unshare never fails where gcc's build succeeds.
    src = tmp_path / "u.c"
    src.write_text(UNSHARE)
    ref, exe = tmp_path / "u_ref", tmp_path / "u"
    subprocess.run([cc, "-O2", str(src), "-o", str(ref)], check=True)
    subprocess.run([FORESIGHT, "cc", "-O2", str(src), "-o", str(exe)], check=True)
    want = _run([str(ref)])
    if not want.stdout.startswith("unshare=0"):
        pytest.skip(f"no user namespaces here: {want.stdout.strip()}")
    for _ in range(30):
        r = _run(["taskset", "-c", "0", str(exe)])
        assert (r.returncode, r.stdout) == (0, want.stdout), r.stderr
