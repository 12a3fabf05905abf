"""Anonymous out-of-core data: under a cap, pages of a malloc'd array that went to
swap are resident again after a prefetch (mincore), and their contents are intact."""

import subprocess

import pytest

from foresight import config
from foresight.harness import cgroup
from foresight.harness.run import run_once

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <foresight.h>
#define LEN (192u << 20)
#define PART (16u << 20)
static double resident(char *p, size_t len) {
    unsigned char v[PART / 4096];
    size_t n = 0;
    mincore(p, len, v);
    for (size_t i = 0; i < len / 4096; i++) n += v[i] & 1;
    return (double)n / (double)(len / 4096);
}
int main(void) {
    char *a = malloc(LEN);
    for (size_t i = 0; i < LEN; i++) a[i] = (char)(i * 7 + 3);
    char *part = (char *)(((unsigned long)a + 4095) & ~4095UL);
    double before = resident(part, PART);
    foresight_prefetch(part, PART);
    double after = 0;
    for (int t = 0; t < 400 && (after = resident(part, PART)) < 0.95; t++) usleep(10000);
    size_t bad = 0;
    for (size_t i = 0; i < LEN; i += 512) bad += a[i] != (char)(i * 7 + 3);
    printf("%.3f %.3f %zu\n", before, after, bad);
    return 0;
}
"""


def test_swapped_out_pages_come_back_with_a_prefetch(cc, disk_tmp, swap):
    if cgroup.find_memory_hierarchy() is None:
        pytest.skip("no memory cgroup")
    src, exe = disk_tmp / "s.c", disk_tmp / "s"
    src.write_text(PROGRAM)
    subprocess.run([cc, "-O2", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    r = run_once([str(exe)], mem=64 << 20, capture=True)
    assert r["exit_code"] == 0, r["stderr"]
    before, after, bad = r["stdout"].split()
    assert float(before) < 0.5  # the head of the array went to swap
    assert float(after) >= 0.95  # and the prefetch brought it back
    assert int(bad) == 0
