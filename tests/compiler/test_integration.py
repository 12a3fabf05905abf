"""Integration: unmodified programs built by foresight cc with and without hints, run
out of core under `foresight run --mem 32M`, print identical results; and a small
end-to-end run of `foresight bench compiler`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foresight.bench import compiler as bench

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
MEM = "32M"
DATA = 64 << 20   # file-backed data: 2x the cap

# Small unmodified programs: argv gives the sizes and the data file; stdout is the result.
PROGRAMS = {
    # 2-D five-point stencil over malloc'd arrays, sizes from argv
    "stencil_malloc": r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]), m = atol(argv[2]);
    double *a = malloc(sizeof(double) * (size_t)(n * m));
    double *b = malloc(sizeof(double) * (size_t)(n * m));
    if (!a || !b) return 2;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++) {
            a[i * m + j] = (double)((i * 7 + j * 3) % 101);
            b[i * m + j] = 0;
        }
    for (long i = 1; i < n - 1; i++)
        for (long j = 1; j < m - 1; j++)
            b[i * m + j] = 0.2 * (a[i * m + j] + a[(i - 1) * m + j] + a[(i + 1) * m + j]
                                  + a[i * m + j - 1] + a[i * m + j + 1]);
    double s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++) s += b[i * m + j] * (double)(j % 5 + 1);
    printf("%.6f\n", s);
    free(a); free(b);
    return 0;
}
""",
    # indirect gather over a mapped file, indices from a fixed-seed generator
    "gather_mapped": r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    size_t bytes = strtoull(argv[2], NULL, 10), n = bytes / sizeof(double);
    long count = atol(argv[3]);
    int fd = open(argv[1], O_RDONLY);
    const double *d = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (fd < 0 || d == MAP_FAILED) return 2;
    long *idx = malloc(sizeof(long) * (size_t)count);
    unsigned long x = 99;
    for (long i = 0; i < count; i++) {
        x = x * 2862933555777941757UL + 3037000493UL;
        idx[i] = (long)((x >> 20) % n);
    }
    double s = 0;
    for (long i = 0; i < count; i++)
        s += d[idx[i]];
    printf("%.6f\n", s);
    return 0;
}
""",
    # column traversal of a row-major matrix (variably modified type) in a mapped file
    "columns": r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    size_t bytes = strtoull(argv[2], NULL, 10);
    long m = atol(argv[3]), n = (long)(bytes / sizeof(double)) / m;
    int fd = open(argv[1], O_RDONLY);
    double (*a)[m] = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (fd < 0 || (void *)a == MAP_FAILED) return 2;
    double s = 0;
    for (long j = 0; j < m; j += 512)
        for (long i = 0; i < n; i++)
            s += a[i][j] * (double)(j + 1);
    printf("%.6f\n", s);
    return 0;
}
""",
    # A[i*m + j] traversal of a linearized matrix, row by row, and by columns
    "linearized": r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
int main(int argc, char **argv) {
    size_t bytes = strtoull(argv[2], NULL, 10);
    long m = atol(argv[3]), n = (long)(bytes / sizeof(double)) / m;
    int fd = open(argv[1], O_RDONLY);
    const double *A = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (fd < 0 || A == MAP_FAILED) return 2;
    double rows = 0, cols = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            rows += A[i * m + j];
    for (long j = 0; j < m; j += 1000)
        for (long i = 0; i < n; i++)
            cols += A[i * m + j];
    printf("%.6f %.6f\n", rows, cols);
    return 0;
}
""",
    # rows of a mapped file reached through a row-pointer array (double **), summed
    # row by row with a weight per column
    "row_pointers": r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
static double weighted(double **rows, long n, long m) {
    double s = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++)
            s += rows[i][j] * (double)(j % 7 + 1);
    return s;
}
int main(int argc, char **argv) {
    size_t bytes = strtoull(argv[2], NULL, 10);
    long m = atol(argv[3]), n = (long)(bytes / sizeof(double)) / m;
    int fd = open(argv[1], O_RDONLY);
    double *d = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    double **rows = malloc(sizeof(double *) * (size_t)n);
    if (fd < 0 || d == MAP_FAILED || !rows) return 2;
    for (long i = 0; i < n; i++)   /* every other row first, then the rest */
        rows[i] = d + (size_t)((i % 2 ? n / 2 + i / 2 : i / 2) * m);
    printf("%.6f\n", weighted(rows, n, m));
    return 0;
}
""",
}


def build(src: Path, out: Path) -> dict[str, str]:
    exes = {}
    for variant, extra in (("O", ["--no-prefetch"]), ("P", [])):
        exe = out / f"{src.stem}-{variant}"
        p = subprocess.run([FORESIGHT, "cc", "-O2", *extra, str(src), "-o", str(exe)],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        # A generator bug would otherwise pass: the driver compiles the original instead.
        assert "the transformed code did not compile" not in p.stderr, p.stderr
        exes[variant] = str(exe)
    return exes


def run_capped(cmd: list[str], files: list[str], tmp: Path) -> str:
    """Run CMD under `foresight run --mem 32M --cold` at Linux's default 128 KiB readahead
    (a disk's larger setting, e.g. 8 MiB, thrashes a 32 MiB cap); its stdout."""
    report = tmp / "run.json"
    args = [FORESIGHT, "run", "--mem", MEM, "--cold", "--readahead-kb", "128", "--json",
            str(report)]
    for f in files:
        args += ["--file", f]
    p = subprocess.run([*args, "--", *cmd], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{cmd}: {p.stderr}"
    assert json.loads(report.read_text())["mem_limit_bytes"] == 32 << 20
    return p.stdout


@pytest.fixture(scope="module")
def doubles(tmp_path_factory):
    """A 64 MiB file of deterministic doubles (the kernels' data format), on disk."""
    out = tmp_path_factory.mktemp("kernels")
    exes = build(bench.kernels_dir() / "gather.c", out)
    return bench.data_file("doubles", DATA, exes["O"])


def same_both_ways(exes: dict[str, str], args: list[str], files: list[str], tmp: Path) -> str:
    o = run_capped([exes["O"], *args], files, tmp)
    p = run_capped([exes["P"], *args], files, tmp)
    assert o == p, f"outputs differ with hints:\nO: {o}\nP: {p}"
    assert o.strip()
    return o


@pytest.mark.parametrize("name", ["gather_mapped", "columns", "linearized", "row_pointers"])
def test_small_programs_out_of_core(name, doubles, tmp_path):
    src = tmp_path / f"{name}.c"
    src.write_text(PROGRAMS[name])
    exes = build(src, tmp_path)
    extra = {"gather_mapped": ["4096"], "columns": ["8192"], "linearized": ["8192"],
             "row_pointers": ["65536"]}[name]
    same_both_ways(exes, [doubles, str(DATA), *extra], [doubles], tmp_path)


@pytest.mark.parametrize("size, out_of_core", [(16 << 20, False), (64 << 20, True)])
def test_stencil_over_malloced_arrays(size, out_of_core, tmp_path, request):
    if out_of_core:
        request.getfixturevalue("swap")
    src = tmp_path / "stencil_malloc.c"
    src.write_text(PROGRAMS["stencil_malloc"])
    exes = build(src, tmp_path)
    m = 2048
    n = size // 2 // 8 // m
    same_both_ways(exes, [str(n), str(m)], [], tmp_path)


@pytest.mark.parametrize("name", ["gather", "colsum", "matvec_t", "bucket_sort", "stencil",
                                  "stencil_rows", "rowptr", "tensor3", "walk"])
def test_bench_kernels_out_of_core(name, doubles, tmp_path, request):
    k = bench.KERNELS[name]
    if k.data == "anon":
        request.getfixturevalue("swap")
    exes = build(bench.kernels_dir() / f"{name}.c", tmp_path)
    data = {"anon": "-", "doubles": doubles}.get(k.data) or bench.data_file(k.data, DATA,
                                                                           exes["O"])
    o = run_capped([exes["O"], "run", data, str(DATA)], [] if data == "-" else [data], tmp_path)
    p = run_capped([exes["P"], "run", data, str(DATA)], [] if data == "-" else [data], tmp_path)
    assert bench.parse_output(o)[0] == bench.parse_output(p)[0]
    if name == "bucket_sort":
        assert "sorted yes" in o


def test_bench_compiler_end_to_end(tmp_path):
    out = tmp_path / "x.json"
    p = subprocess.run([FORESIGHT, "bench", "compiler", "--kernels", "gather", "--mem", MEM,
                        "--ratio", "2", "--json", str(out), "--plots", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    assert res["suite"] == "compiler" and res["mem_limit_bytes"] == 32 << 20
    (row,) = res["rows"]
    assert row["kernel"] == "gather" and row["data_bytes"] == 64 << 20
    assert row["O"]["checksum"] == row["P"]["checksum"]
    assert row["O"]["access_seconds"] > 0 and row["P"]["access_seconds"] > 0
    assert row["micro_hints"]["pattern"] == "indirect"
    assert (tmp_path / "compiler-speedup.png").stat().st_size > 0
    assert "gather" in p.stdout


def test_bench_compiler_asks_for_swap_for_malloced_data(tmp_path, no_swap):
    p = subprocess.run([FORESIGHT, "bench", "compiler", "--kernels", "stencil,gather",
                        "--mem", MEM, "--ratio", "2"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2
    assert "foresight swap enable" in p.stderr and "--kernels gather" in p.stderr


PTHREAD_EXIT_MAIN = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static double *a;
static long n = 1 << 20;
static void *work(void *arg) {
    double s = 0;
    for (long i = 0; i < n; i++) s += a[i];
    printf("sum %.1f\n", s);
    return arg;
}
int main(void) {
    a = calloc((size_t)n, sizeof *a);
    for (long i = 0; i < n; i++) a[i] = (double)(i % 7);
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    pthread_exit(NULL);
}
"""


def test_a_main_ending_in_pthread_exit_ends_with_its_last_thread(tmp_path):
    """The library's threads never end: the process must still end (status 0, output
    flushed) when the program's last thread does, as cc's build does."""
    src = tmp_path / "pte.c"
    src.write_text(PTHREAD_EXIT_MAIN)
    outs = {}
    for name, cc in (("plain", ["cc"]), ("hinted", [FORESIGHT, "cc"])):
        exe = tmp_path / name
        subprocess.run([*cc, "-O2", "-pthread", "-o", str(exe), str(src)], check=True)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        outs[name] = (r.returncode, r.stdout)
    assert outs["hinted"] == outs["plain"] == (0, "sum 3145722.0\n")


RAW_EXIT_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
static void handler(void) { fputs("exit handler\n", stdout); }
int main(void) {
    atexit(handler);
    long n = 4L << 20;
    double *a = malloc(n * sizeof *a), s = 0;
    for (long i = 0; i < n; i++) a[i] = (double)(i % 23);
    for (long i = 0; i < n; i++) s += a[i];
    printf("sum %.1f\n", s);
    fflush(stdout);
    printf("never flushed");
    syscall(SYS_exit, 7);
}
"""


def test_a_main_ending_in_the_raw_exit_system_call_ends_the_process_as_cc_s_build(tmp_path):
    """A main thread ended by the raw exit system call (a thread library's or a
    sandbox's way): the library's threads must not keep the process alive (they block
    every signal, so not even SIGTERM would end it); it ends with that status, no exit
    handler run and nothing more flushed, as cc's build."""
    src = tmp_path / "rawexit.c"
    src.write_text(RAW_EXIT_MAIN)
    outs = {}
    for name, cc in (("plain", ["cc"]), ("hinted", [FORESIGHT, "cc"])):
        exe = tmp_path / name
        subprocess.run([*cc, "-O2", "-o", str(exe), str(src)], check=True)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "FORESIGHT_INCORE": "hint"})
        outs[name] = (r.returncode, r.stdout)
    assert outs["hinted"] == outs["plain"] == (7, "sum 46137333.0\n")


SANDBOXED = r"""
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
static void sandbox(const char *how) {
    if (how[0] == 's') {            /* strict: read, write, exit, sigreturn */
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
        return;
    }
    /* a filter that kills the thread at madvise or futex, through seccomp(2) */
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) _exit(3);
}
int main(int argc, char **argv) {
    long n = 4L << 20;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), s = 0;
    for (long i = 0; i < n; i++) { a[i] = (double)(i % 23); b[i] = 1.0; }
    sandbox(argc > 1 ? argv[1] : "strict");
    for (int r = 0; r < 3; r++) {
        for (long i = 0; i < n; i++) b[i] = b[i] * 0.5 + a[i];
        for (long i = n - 1; i >= 0; i--) s += b[i];
    }
    char msg[32], t[32];
    int len = 0, k = 0;
    long v = (long)s;
    do { t[k++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (k) msg[len++] = t[--k];
    msg[len++] = '\n';
    write(1, msg, (size_t)len);
    syscall(SYS_exit, 0);           /* strict mode allows exit, not exit_group */
}
"""


@pytest.mark.parametrize("mode", ["strict", "filter"])
def test_a_program_that_sandboxes_itself_with_seccomp_keeps_running_hinted(tmp_path, mode):
    """A hint's system calls after the program entered seccomp (strict mode, or a filter
    killing the thread at madvise or futex) would kill the thread where cc's build, whose
    loops make no system call, lives: the library drops them there."""
    src = tmp_path / "sandboxed.c"
    src.write_text(SANDBOXED)
    outs = {}
    for name, cc in (("plain", ["cc"]), ("hinted", [FORESIGHT, "cc"])):
        exe = tmp_path / name
        subprocess.run([*cc, "-O2", "-o", str(exe), str(src)], check=True)
        r = subprocess.run([str(exe), mode], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "FORESIGHT_INCORE": "hint"})
        outs[name] = (r.returncode, r.stdout)
    assert outs["hinted"] == outs["plain"] == (0, "199753681\n")


USER_NAMESPACE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    int rc = unshare(CLONE_NEWUSER);    /* the kernel wants one thread for this */
    printf("unshare %d (%d)\n", rc, rc ? errno : 0);
    long n = 4L << 20;
    double *a = malloc(n * sizeof *a), s = 0;
    for (long i = 0; i < n; i++) a[i] = (double)(i % 29);
    for (long i = 0; i < n; i += 2) s += a[i];
    printf("%.1f\n", s);
    fflush(stdout);
    pthread_exit(NULL);                 /* the exit watcher started again ends the process */
}
"""


def test_a_program_can_make_itself_a_user_namespace(tmp_path):
    """unshare(CLONE_NEWUSER) fails with EINVAL in a multithreaded process; the
    library's threads end first (runtime/src/alone.c), so the hinted build gets its user
    namespace as cc's does; they start again, so the hints after it are issued and the
    process ends with its main thread's pthread_exit."""
    src = tmp_path / "userns.c"
    src.write_text(USER_NAMESPACE)
    outs = {}
    stats = tmp_path / "stats.json"
    for name, cc in (("plain", ["cc"]), ("hinted", [FORESIGHT, "cc"])):
        exe = tmp_path / name
        subprocess.run([*cc, "-O2", "-pthread", "-o", str(exe), str(src)], check=True)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "FORESIGHT_INCORE": "hint",
                                "FORESIGHT_STATS": str(stats)})
        outs[name] = (r.returncode, r.stdout)
    if not outs["plain"][1].startswith("unshare 0 "):
        pytest.skip(f"no user namespaces here: {outs['plain'][1].splitlines()[0]}")
    assert outs["hinted"] == outs["plain"]
    sites = json.loads(stats.read_text())["sites"]
    assert sum(s["issued"] for s in sites) > 0
