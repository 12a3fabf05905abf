"""The memory cgroup's statistics kept fresh (runtime/src/memcg.c, and the harness's own
reads in harness/cgroup.py): under a cgroup limit with memory in use at 3/4 of it, the
runtime reads the cgroup's memory.stat (which makes the kernel flush the statistics its
reclaim decides from) about every 10 ms once the program's first hint reached it, never
before one, and never without a limit."""

import os
import subprocess

import pytest

from foresight import config
from foresight.harness import cgroup
from foresight.harness.run import run_once

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <foresight.h>
#define LEN (48u << 20)
int main(void) {
    char *a = malloc(LEN);
    if (HINT)
        foresight_prefetch(a, 4096);   /* the first hint: the runtime's threads begin */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long sum = 0;
    do {   /* sweep 48 MiB under a 32 MiB cap for at least half a second */
        for (size_t i = 0; i < LEN; i += 4096) { a[i] += 1; sum += (unsigned char)a[i]; }
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000000L);
    printf("%lu\n", sum > 0);
    return 0;
}
"""


def _build(cc, tmp_path, hint: bool):
    src, exe = tmp_path / f"k{int(hint)}.c", tmp_path / f"k{int(hint)}"
    src.write_text(PROGRAM)
    subprocess.run([cc, "-O1", f"-DHINT={int(hint)}", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    return exe


@pytest.fixture
def program(cc, tmp_path):
    return _build(cc, tmp_path, True)


@pytest.fixture
def unhinted(cc, tmp_path):
    return _build(cc, tmp_path, False)


@pytest.mark.parametrize("env", [{}, {"FORESIGHT_MEM": "1G"}])
def test_under_a_limit_the_runtime_reads_the_cgroup_s_statistics(root, program, request, env):
    # Gated on the cgroup's own usage against its limit: a FORESIGHT_MEM budget larger
    # than the cgroup's limit changes nothing (the cgroup's reclaim is what may kill).
    if cgroup.find_memory_hierarchy() is None:
        pytest.skip("no memory cgroup")
    request.getfixturevalue("swap")
    r = run_once([str(program)], mem=32 << 20, capture=True, env={**os.environ, **env})
    assert r["exit_code"] == 0 and r["stdout"] == "1\n", r["stderr"]
    flushes = r["runtime"]["global"]["memcg_stat_flushes"]
    # At least half a second at the cap: about 50 reads at one per 10 ms.
    assert flushes >= 10, flushes


def test_before_the_first_hint_nothing_is_read(root, unhinted, request):
    # The same sweep at the cap, no hint issued: the runtime's threads sleep (workers.c),
    # so nothing reads memory.stat and nothing of the runtime's is locked.
    if cgroup.find_memory_hierarchy() is None:
        pytest.skip("no memory cgroup")
    request.getfixturevalue("swap")
    r = run_once([str(unhinted)], mem=32 << 20, capture=True, env=dict(os.environ))
    assert r["exit_code"] == 0 and r["stdout"] == "1\n", r["stderr"]
    assert r["runtime"]["global"]["memcg_stat_flushes"] == 0


def test_far_from_the_cgroup_s_limit_nothing_is_read(root, program):
    # 48 MiB in a 1 GiB cgroup, with FORESIGHT_MEM=4M putting the runtime itself over
    # its budget: the cgroup is far from its limit, so nothing reads memory.stat.
    if cgroup.find_memory_hierarchy() is None:
        pytest.skip("no memory cgroup")
    r = run_once([str(program)], mem=1 << 30, capture=True,
                 env={**os.environ, "FORESIGHT_MEM": "4M"})
    assert r["exit_code"] == 0 and r["stdout"] == "1\n", r["stderr"]
    assert r["runtime"]["global"]["memcg_stat_flushes"] == 0


def test_the_harness_reads_memory_stat_until_stopped_or_the_cgroup_is_gone(tmp_path):
    # A stand-in cgroup directory whose memory.stat is a FIFO: each read the harness's
    # thread makes is one open of the FIFO, which this test counts from the other end.
    import threading
    import time

    g = cgroup.Cgroup.__new__(cgroup.Cgroup)
    g.path, g.limit = tmp_path, 1 << 30
    fifo = tmp_path / "memory.stat"
    os.mkfifo(fifo)
    stop = g.keep_stats_fresh(period=0.02)
    written = 0
    while written < 3:   # three reads, each one open by the thread
        try:
            with open(fifo, "w") as w:
                w.write("active_anon 0\n")
            written += 1
        except BrokenPipeError:
            # This open met the end of the thread's last read (it was still open, then
            # found the last writer gone and closed): write to its next read instead.
            pass
    stop.set()
    deadline = time.monotonic() + 5
    while any(t.name == "memcg-stats" for t in threading.enumerate()):
        if time.monotonic() > deadline:
            # Stopped while blocked opening the FIFO: unblock it once.
            with open(fifo, "w"):
                pass
            deadline = time.monotonic() + 5
        time.sleep(0.01)
    # The cgroup gone (the file with it): the thread ends by itself.
    fifo.unlink()
    stop = g.keep_stats_fresh(period=0.02)
    deadline = time.monotonic() + 5
    while any(t.name == "memcg-stats" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the thread outlived its cgroup"
        time.sleep(0.01)
    assert not stop.is_set()
    g.limit = None   # an unlimited cgroup (the balloon's) is not read at all
    assert g.keep_stats_fresh(period=0.02).is_set()
    assert not any(t.name == "memcg-stats" for t in threading.enumerate())
