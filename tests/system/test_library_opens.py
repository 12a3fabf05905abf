"""The library's threads open no file while the program runs (runtime/src/ownfd.c).

open() returns the lowest free descriptor: a program that closes descriptor 0 and opens
its input expects that number, and a library thread opening a /proc file at that moment
would take it.  So every file the library reads again and again is opened before the
program runs and kept; this runs a hinted program whose workers release, pin and sample
(a memory budget below its data, pinning forced, a memory cgroup when one can be made)
under strace and checks that no thread but the program's opened anything."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    long n = 8L << 20;
    double *a = malloc(n * sizeof *a), s = 0;
    for (long i = 0; i < n; i++) a[i] = (double)(i % 1000);
    for (int r = 0; r < 4; r++) {
        for (long i = 0; i < n; i++) s += a[i] * r;
        usleep(300000);   /* the keeper's samples (once a second) fall in the run */
    }
    printf("sum %.1f\n", s);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_no_library_thread_opens_a_file_while_the_program_runs(tmp_path):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "p"
    subprocess.run([FORESIGHT, "cc", "-O2", str(src), "-o", str(exe)], check=True,
                   capture_output=True, text=True, timeout=300)
    log = tmp_path / "strace.log"
    env = {**os.environ, "FORESIGHT_MEM": "16M", "FORESIGHT_PIN": "always",
           "FORESIGHT_INCORE": "hint", "FORESIGHT_RELEASE": "pageout"}
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat,openat2,creat",
                        "-o", str(log), str(exe)], capture_output=True, text=True,
                       timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("sum ")
    lines = log.read_text().splitlines()
    pids = [int(m.group(1)) for m in (re.match(r"(\d+) ", x) for x in lines) if m]
    main = pids[0]
    # The program's main() starts after the runtime's constructor: from the first open
    # of another thread on, every open must be the main thread's.
    others = [x for x in lines if re.match(r"\d+ ", x) and int(x.split()[0]) != main]
    assert others == [], "\n".join(others[:10])
