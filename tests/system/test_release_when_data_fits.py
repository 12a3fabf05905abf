"""Releases wait while the program's data fits in its memory.  Under `foresight run
--mem`, a program sweeping an anonymous array of 0.75 times the cap (the cgroup at 3/4
of its limit, nothing swapped, nothing refaulted) has its releases skipped: paging out
data that fits only makes it come back (NAS IS and MG near the cap: 2-4 times slower
with hints before).  The same program with its data at 3 times the cap releases.  The
data is intact and the output the same in both."""

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


def run(exe, tmp_path, mem, mib):
    stats = tmp_path / f"stats-{mem}.json"
    r = subprocess.run([FORESIGHT, "run", "--mem", mem, "--", str(exe), str(mib)],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "FORESIGHT_STATS": str(stats)})
    assert r.returncode == 0, r.stderr
    return r.stdout, json.loads(stats.read_text())["global"]


def test_releases_wait_while_the_data_fits_and_run_when_it_does_not(cc, tmp_path, swap):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "p"
    subprocess.run([cc, "-O2", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    fits_out, fits = run(exe, tmp_path, "64M", 48)
    assert fits["releases"] == 3 * 48
    assert fits["releases_idle"] > 0                     # pressure by usage alone ...
    assert fits["pages_deactivated"] == 0 and fits["pages_paged_out"] == 0  # ... waited
    big_out, big = run(exe, tmp_path, "16M", 48)
    assert big["pages_deactivated"] + big["pages_paged_out"] > 0
    assert fits_out == big_out and fits_out.startswith("sum ")
