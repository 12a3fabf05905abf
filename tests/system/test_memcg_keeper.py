"""The memory cgroup's statistics kept fresh (runtime/src/memcg.c, and the harness's own
reads in harness/cgroup.py): under a cgroup limit with memory in use at 3/4 of it, the
runtime reads the cgroup's memory.stat (which makes the kernel flush the statistics its
reclaim decides from) about every 100 ms, and never without a limit."""

import json
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
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long sum = 0;
    do {   /* sweep 48 MiB under a 32 MiB cap for at least half a second */
        for (size_t i = 0; i < LEN; i += 4096) { a[i] += 1; sum += (unsigned char)a[i]; }
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000000L);
    foresight_prefetch(a, 4096);   /* a hint, so the runtime is linked and started */
    printf("%lu\n", sum > 0);
    return 0;
}
"""


@pytest.fixture
def program(cc, tmp_path):
    src, exe = tmp_path / "k.c", tmp_path / "k"
    src.write_text(PROGRAM)
    subprocess.run([cc, "-O1", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    return exe


def test_under_a_limit_the_runtime_reads_the_cgroup_s_statistics(program, swap, tmp_path):
    if cgroup.find_memory_hierarchy() is None:
        pytest.skip("no memory cgroup")
    r = run_once([str(program)], mem=32 << 20, capture=True)
    assert r["exit_code"] == 0 and r["stdout"] == "1\n", r["stderr"]
    flushes = r["runtime"]["global"]["memcg_stat_flushes"]
    # At least half a second at the cap: about 5 reads at one per 100 ms.
    assert flushes >= 2, flushes


def test_without_a_limit_there_is_nothing_to_keep_fresh(program, tmp_path):
    stats = tmp_path / "s.json"
    subprocess.run([str(program)], check=True, capture_output=True,
                   env={"FORESIGHT_STATS": str(stats), "PATH": "/usr/bin:/bin"})
    assert json.loads(stats.read_text())["global"]["memcg_stat_flushes"] == 0


def test_the_harness_reads_memory_stat_while_the_program_runs(tmp_path, monkeypatch):
    # A stand-in cgroup directory: the reads are counted, the stop event ends them.
    import time

    g = cgroup.Cgroup.__new__(cgroup.Cgroup)
    g.path, g.limit = tmp_path, 1 << 30
    (tmp_path / "memory.stat").write_text("active_anon 0\n")
    reads = []
    real_open = open

    def counting_open(path, *a, **kw):
        if str(path).endswith("memory.stat"):
            reads.append(time.monotonic())
        return real_open(path, *a, **kw)

    monkeypatch.setattr("builtins.open", counting_open)
    stop = g.keep_stats_fresh(period=0.05)
    time.sleep(0.4)
    stop.set()
    time.sleep(0.15)
    n = len(reads)
    time.sleep(0.15)
    assert n >= 4 and len(reads) == n
    g.limit = None   # an unlimited cgroup (the balloon's) is not read
    reads.clear()
    stop = g.keep_stats_fresh(period=0.05)
    time.sleep(0.2)
    assert stop.is_set() and reads == []
