"""Releases near the memory limit.  Under `foresight run --mem`, a program sweeping an
anonymous array of 0.75 times the cap (the cgroup at 3/4 of its limit, nothing swapped,
nothing refaulted) has its releases skipped: paging out data that fits only makes it
come back (NAS IS and MG near the cap: 2-4 times slower with hints before).  The same
program with its data at 3 times the cap releases.  A program that overflows by a little
(its address space within 9/8 of the cap) has its releases probed: a few blocks of each
are paged out, and a site whose probed pages come back soon has its releases left out
from then on, so the kernel's LRU lists keep the data the next sweep reads first.  A
sweep that turns back over what it just passed (forward, then backward: NAS LU's
pattern) is such a site; a sweep that always starts again from the front (a cyclic
reuse, where the releases win) is not, and its releases go on deactivating.  The data
is intact and the output the same in every run."""

import json
import os
import subprocess
import sys
from pathlib import Path

from foresight import config

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <foresight.h>

int main(int argc, char **argv) {
    size_t len = (size_t)atol(argv[1]) << 20, chunk = 1u << 20;
    unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) return 2;
    FORESIGHT_SITE(site, "a");
    foresight_prefetch(a, 4096); /* wakes the runtime's threads */
    for (size_t i = 0; i < len; i++) a[i] = (unsigned char)(i * 7);
    unsigned long sum = 0;
    for (int sweep = 0; sweep < 3; sweep++)
        for (size_t off = 0; off < len; off += chunk) {
            for (size_t i = off; i < off + chunk; i += 64) sum += a[i];
            foresight_release_at(&site, a + off, chunk);  /* behind the sweep */
        }
    for (size_t i = 0; i < len; i++)
        if (a[i] != (unsigned char)(i * 7)) return 3;
    printf("sum %lu\n", sum);
    return 0;
}
"""


def build(cc, tmp_path, program):
    src = tmp_path / "p.c"
    src.write_text(program)
    exe = tmp_path / "p"
    subprocess.run([cc, "-O2", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    return exe


def run(exe, tmp_path, mem, *args):
    """stdout, stderr and the run-wide statistics of EXE ARGS under a cap of MEM."""
    stats = tmp_path / f"stats-{mem}-{'-'.join(args)}.json"
    r = subprocess.run([FORESIGHT, "run", "--mem", mem, "--", str(exe), *args],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "FORESIGHT_STATS": str(stats)})
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr, json.loads(stats.read_text())["global"]


def test_releases_wait_while_the_data_fits_and_run_when_it_does_not(cc, tmp_path, swap):
    exe = build(cc, tmp_path, PROGRAM)
    fits_out, _, fits = run(exe, tmp_path, "64M", "48")
    assert fits["releases"] == 3 * 48
    assert fits["releases_idle"] > 0                     # pressure by usage alone ...
    assert fits["pages_deactivated"] == 0 and fits["pages_paged_out"] == 0  # ... waited
    big_out, _, big = run(exe, tmp_path, "16M", "48")
    assert big["pages_deactivated"] + big["pages_paged_out"] > 0
    assert fits_out == big_out and fits_out.startswith("sum ")


PROBED = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <foresight.h>

int main(int argc, char **argv) {
    size_t len = (size_t)atol(argv[1]) << 20, chunk = 1u << 20, nchunks = len / chunk;
    int turn_back = strcmp(argv[2], "back") == 0;
    unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) return 2;
    FORESIGHT_SITE(ahead, "a ahead");
    FORESIGHT_SITE(behind, "a behind");
    for (size_t i = 0; i < len; i++) a[i] = (unsigned char)(i * 7);
    unsigned long sum = 0;
    for (int sweep = 0; sweep < 8; sweep++) {
        int back = turn_back && sweep % 2 == 1;
        for (size_t k = 0; k < nchunks; k++) {
            size_t c = back ? nchunks - 1 - k : k;
            if (k + 4 < nchunks) /* four chunks ahead, as compiled streams are */
                foresight_prefetch_at(&ahead, a + (back ? c - 4 : c + 4) * chunk, chunk);
            for (size_t i = c * chunk; i < (c + 1) * chunk; i += 64) sum += a[i];
            foresight_release_at(&behind, a + c * chunk, chunk);
        }
    }
    for (size_t i = 0; i < len; i++)
        if (a[i] != (unsigned char)(i * 7)) return 3;
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL || fscanf(f, "%lu", &pages) != 1) return 4;
    fclose(f);
    fprintf(stderr, "space %lu MiB\n", pages * 4096 >> 20);
    printf("sum %lu\n", sum);
    return 0;
}
"""


def test_a_sweep_that_turns_back_keeps_its_data_and_a_cyclic_one_releases(cc, tmp_path, swap):
    exe = build(cc, tmp_path, PROBED)
    runs = {}
    for pattern in ("back", "cyclic"):
        out, err, stats = run(exe, tmp_path, "256M", "256", pattern)
        space = int(err.split("space ")[1].split()[0])
        assert 256 < space <= 288, space  # over the cap by less than an eighth: probes
        runs[pattern] = out, stats
    (back_out, back), (cyc_out, cyc) = runs["back"], runs["cyclic"]
    assert back["pages_paged_out"] > 0 and back["pages_back"] > 0  # probed, came back ...
    assert back["releases_early"] > 0                    # ... so releases were left out
    assert cyc["pages_paged_out"] > 0 and cyc["pages_back"] <= cyc["pages_paged_out"] // 8
    assert cyc["releases_early"] == 0 and cyc["pages_deactivated"] > 0
    assert back_out == cyc_out and back_out.startswith("sum ")
