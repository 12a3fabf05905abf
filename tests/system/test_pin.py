"""The process on one CPU while hints page (runtime/src/pin.c), through foresight cc and
the shared library: a program whose hinted nest runs over its budget is pinned, yet
prints what the original prints, its mask queries (the raw system call's too), the
children system(), popen() and a raw execve start and the mask after its own
pthread_create included; the pin is counted and ends
with the thread."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

PROGRAM = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *nothing(void *arg) { return arg; }

/* The calling thread's Cpus_allowed_list as the kernel has it (to stderr: the hinted
 * build's is the pin, so it is not part of the compared output). */
static void own_list(const char *when) {
    char line[256];
    FILE *f = fopen("/proc/thread-self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
            fprintf(stderr, "%s %s", when, line);
    if (f) fclose(f);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 8L << 20;
    double *a = malloc(n * sizeof *a);
    for (long i = 0; i < n; i++)
        a[i] = (double)(i % 1000);
    double s = 0;
    for (int r = 0; r < 3; r++)
        for (long i = 0; i < n; i++)
            s += a[i] * r;
    printf("sum %.1f\n", s);
    own_list("nest");
    cpu_set_t m;
    sched_getaffinity(0, sizeof m, &m);
    printf("sched_getaffinity %d\n", CPU_COUNT(&m));
    pthread_getaffinity_np(pthread_self(), sizeof m, &m);
    printf("pthread_getaffinity_np %d\n", CPU_COUNT(&m));
    CPU_ZERO(&m);
    syscall(SYS_sched_getaffinity, 0, sizeof m, &m);
    printf("raw sched_getaffinity %d\n", CPU_COUNT(&m));
    fflush(stdout);
    /* A child by vfork and the raw execve system call, as a shell without exec() */
    pid_t c = vfork();
    if (c == 0) {
        char *av[] = {"/usr/bin/grep", "Cpus_allowed_list", "/proc/self/status", NULL};
        char *env[] = {NULL};
        syscall(SYS_execve, av[0], av, env);
        _exit(127);
    }
    waitpid(c, NULL, 0);
    system("grep Cpus_allowed_list /proc/self/status");
    FILE *p = popen("grep Cpus_allowed_list /proc/self/status", "r");
    char line[256];
    while (p && fgets(line, sizeof line, p))
        printf("popen %s", line);
    if (p) pclose(p);
    pthread_t t;
    pthread_create(&t, NULL, nothing, NULL);
    pthread_join(t, NULL);
    own_list("thread");
    free(a);
    return 0;
}
"""


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    d = tmp_path_factory.mktemp("pin")
    src = d / "p.c"
    src.write_text(PROGRAM)
    out = {}
    for variant, flags in (("O", ["--no-prefetch"]), ("P", [])):
        exe = d / f"p-{variant}"
        subprocess.run([FORESIGHT, "cc", "-O2", *flags, str(src), "-o", str(exe)],
                       check=True, capture_output=True, text=True, timeout=300)
        out[variant] = exe
    return out


def _run(exe, tmp_path, **env):
    stats = tmp_path / f"{exe.name}.json"
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "FORESIGHT_MEM": "16M", "FORESIGHT_STATS": str(stats),
                            **env})
    assert r.returncode == 0, r.stderr
    return r, json.loads(stats.read_text()) if stats.exists() else None


def test_pinned_while_hinted_and_the_program_sees_its_own_mask(builds, tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU")
    o, _ = _run(builds["O"], tmp_path)
    p, stats = _run(builds["P"], tmp_path, FORESIGHT_PIN="always")
    assert p.stdout == o.stdout
    cpus = len(os.sched_getaffinity(0))
    assert f"sched_getaffinity {cpus}\n" in p.stdout
    assert f"raw sched_getaffinity {cpus}\n" in p.stdout
    # system()'s, popen()'s and the raw execve's children
    assert p.stdout.count("Cpus_allowed_list:") == 3
    g = stats["global"]
    assert g["pins"] >= 1, (g["pin_ended"], p.stderr)
    assert g["pin_ended"] == "the program made a thread"
    # The kernel's own view: one CPU after the nest, the program's mask after its thread.
    nest = next(line for line in p.stderr.splitlines() if line.startswith("nest "))
    thread = next(line for line in p.stderr.splitlines() if line.startswith("thread "))
    assert nest.split()[-1].isdigit(), nest
    assert thread.split()[-1] == o.stderr.splitlines()[-1].split()[-1]


def test_pin_off(builds, tmp_path):
    o, _ = _run(builds["O"], tmp_path)
    p, stats = _run(builds["P"], tmp_path, FORESIGHT_PIN="0")
    assert p.stdout == o.stdout
    assert stats["global"]["pins"] == 0
    nest = next(line for line in p.stderr.splitlines() if line.startswith("nest "))
    assert nest == next(line for line in o.stderr.splitlines() if line.startswith("nest "))
