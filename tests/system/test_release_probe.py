"""A program that overflows its memory by a little (its address space within 9/8 of
the cap) has its releases probed: a few blocks of each are paged out, and a site whose
probed pages come back soon has its releases left out from then on, so the kernel's
LRU lists keep the data the next sweep reads first.  A sweep that turns back over what
it just passed (forward, then backward: NAS LU's pattern) is such a site; a sweep that
always starts again from the front (a cyclic reuse, where the releases win) is not,
and its releases go on deactivating.  The data is intact and the output the same."""

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


def run(exe, tmp_path, pattern):
    stats = tmp_path / f"stats-{pattern}.json"
    r = subprocess.run([FORESIGHT, "run", "--mem", "256M", "--", str(exe), "256", pattern],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "FORESIGHT_STATS": str(stats)})
    assert r.returncode == 0, r.stderr
    space = int(r.stderr.split("space ")[1].split()[0])
    assert 256 < space <= 288, space  # over the cap by less than an eighth: probes
    return r.stdout, json.loads(stats.read_text())["global"]


def test_a_sweep_that_turns_back_keeps_its_data_and_a_cyclic_one_releases(cc, tmp_path, swap):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "p"
    subprocess.run([cc, "-O2", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    back_out, back = run(exe, tmp_path, "back")
    assert back["pages_paged_out"] > 0 and back["pages_back"] > 0  # probed, came back ...
    assert back["releases_early"] > 0                    # ... so releases were left out
    cyc_out, cyc = run(exe, tmp_path, "cyclic")
    assert cyc["pages_paged_out"] > 0 and cyc["pages_back"] <= cyc["pages_paged_out"] // 8
    assert cyc["releases_early"] == 0 and cyc["pages_deactivated"] > 0
    assert back_out == cyc_out and back_out.startswith("sum ")
