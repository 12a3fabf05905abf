"""Hints never change results: the micro patterns print identical checksums with and
without hints under a tight cap, and data written with releases under a cap survive
(shared file pages reach the disk; anonymous pages come back from swap)."""

import subprocess

import pytest

from foresight import config
from foresight.bench.common import foresight_exe
from foresight.harness import cgroup
from foresight.harness.run import run_once

WRITER = r"""
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <foresight.h>
#define LEN (96u << 20)
#define BLOCK (1u << 20)
int main(int argc, char **argv) {
    FORESIGHT_SITE(site, "m[b]");
    int fd = open(argv[1], O_RDWR);
    uint64_t *f = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    uint64_t *anon = argc > 2 ? mmap(NULL, LEN, PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;
    for (size_t b = 0; b < LEN; b += BLOCK) {
        for (size_t i = b / 8; i < (b + BLOCK) / 8; i++) {
            f[i] = i * 2654435761u;
            if (anon) anon[i] = ~i;
        }
        foresight_release_at(&site, (char *)f + b, BLOCK);
        if (anon) foresight_release_at(&site, (char *)anon + b, BLOCK);
    }
    size_t bad = 0;
    for (size_t i = 0; anon && i < LEN / 8; i++)
        bad += anon[i] != ~i;
    printf("anon_bad %zu released %lu\n", bad, site.fs_stat[8]);
    munmap(f, LEN);
    close(fd);
    return bad != 0;
}
"""


def _need_cap():
    if cgroup.find_memory_hierarchy() is None:
        pytest.skip("no memory cgroup")


@pytest.mark.parametrize("pattern", ["forward", "backward", "strided", "indirect"])
def test_micro_outputs_identical_under_a_cap(pattern, micro_bin, disk_tmp):
    _need_cap()
    data = disk_tmp / "d"
    subprocess.run([str(micro_bin / "micro-orig"), "create", str(data), "48M"], check=True)
    outs = []
    for variant in ("orig", "hints"):
        r = run_once([str(micro_bin / f"micro-{variant}"), pattern, "file", str(data),
                      "--stride", "16K", "--distance", "1M"],
                     mem=16 << 20, cold=True, files=[str(data)], capture=True)
        assert r["exit_code"] == 0, r["stderr"]
        outs.append(r["stdout"])
    assert outs[0] == outs[1] and "checksum" in outs[0]


@pytest.mark.parametrize("with_anon", [False, True])
def test_writes_survive_releases_under_a_cap(with_anon, cc, disk_tmp, request):
    _need_cap()
    if with_anon:
        request.getfixturevalue("swap")
    src, exe, data = disk_tmp / "w.c", disk_tmp / "w", disk_tmp / "data"
    src.write_text(WRITER)
    subprocess.run([cc, "-O2", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    data.write_bytes(b"\0" * (96 << 20))
    cmd = [str(exe), str(data)] + (["anon"] if with_anon else [])
    r = run_once(cmd, mem=48 << 20, capture=True, env={"FORESIGHT_RELEASE": "pageout"})
    assert r["exit_code"] == 0, r["stdout"] + r["stderr"]
    assert r["stdout"].startswith("anon_bad 0")
    assert r["peak_memory_bytes"] <= 50 << 20
    # Read the file back from the disk, not from the page cache.
    run_once(["true"], cold=True, files=[str(data)])
    with open(data, "rb") as f:
        raw = f.read()
    words = memoryview(raw).cast("Q")
    bad = sum(1 for i in range(0, len(words), 997) if words[i] != (i * 2654435761) % (1 << 64))
    assert bad == 0


ADVISED_MREMAP = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    long n = 4L << 20;
    size_t bytes = n * sizeof(double);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    double *buf = malloc(1 << 20);
    for (int j = 0; j < (1 << 17); j++)
        buf[j] = (double)(j % 1000);
    for (size_t k = 0; k < 2 * bytes; k += 1 << 20)
        if (pwrite(fd, buf, 1 << 20, k) != 1 << 20)
            return 2;
    double *a = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED || madvise(a, bytes, MADV_RANDOM) != 0)  /* the program's advice */
        return 2;
    long nb = 1L << 20, *b = malloc(nb * sizeof(long));
    unsigned long x = 7;
    for (long i = 0; i < nb; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        b[i] = (long)((x >> 17) % (n / 2)) + n / 4;
    }
    double s = 0;
    for (long i = 0; i < nb; i++)
        s += a[b[i]];
    double *g = mremap(a, bytes, 2 * bytes, MREMAP_MAYMOVE);  /* one mapping, or EFAULT */
    printf("%.17g mremap %s\n", s, g == MAP_FAILED ? "failed" : "ok");
    return 0;
}
"""


def test_the_programs_own_access_advice_stands(cc, disk_tmp):
    # A program that advised its file mapping MADV_RANDOM itself and then grows it with
    # mremap: the runtime's random-access advice for the indirect site (random.c) set a
    # part back to normal at the nest's exit, splitting the mapping: mremap failed.
    _need_cap()
    src, data = disk_tmp / "a.c", disk_tmp / "a.dat"
    src.write_text(ADVISED_MREMAP)
    outs = []
    for variant, flags in (("O", ["--no-prefetch"]), ("P", [])):
        exe = disk_tmp / variant
        subprocess.run([foresight_exe(), "cc", "-O2", *flags, str(src), "-o",
                        str(exe)], check=True)
        r = run_once([str(exe), str(data)], mem=16 << 20, cold=True, capture=True)
        assert r["exit_code"] == 0, r["stderr"]
        outs.append(r["stdout"])
    assert outs[0] == outs[1] and "mremap ok" in outs[0], outs
