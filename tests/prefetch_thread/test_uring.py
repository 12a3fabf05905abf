"""FORESIGHT_PT_ISSUE=uring: the prefetch thread's requests through an io_uring of its
own.  The ring's kernel workers are threads of the process: a program whose main thread
ends with pthread_exit must still end (main_exit.c counts them as the library's), with
its output, and the requests must have gone through the ring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

PROGRAM = r"""
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    char rec[4096];
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        return 1;
    unsigned long sum = 0;
    for (long k = 511; k >= 0; k--) {
        if (pread(fd, rec, sizeof rec, k * 4096) != (ssize_t)sizeof rec)
            return 1;
        sum += (unsigned char)rec[k % 4096];
    }
    printf("%lu\n", sum);
    fflush(stdout);
    pthread_exit(NULL);
}
"""


def _cold(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_a_program_ending_with_pthread_exit_ends_with_the_ring(tmp_path):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "p"
    subprocess.run([FORESIGHT, "cc", "-O2", "--prefetch-thread", "-o", str(exe), str(src),
                    "-lpthread"], check=True)
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * (2 << 12))       # 2 MiB: prefetchable
    want = str(sum(((k % 4096) % 256) for k in range(512))) + "\n"
    for issue in ("fadvise", "uring"):
        # (up to five runs until the thread ran ahead: on a loaded machine it may get no
        # CPU before the program ends; every run must end, and print the same)
        for _ in range(5):
            _cold(data)              # out of the page cache: its requests are issued
            stats = tmp_path / f"{issue}.json"
            run = subprocess.run([str(exe), str(data)], capture_output=True, text=True,
                                 timeout=60, env={**os.environ, "FORESIGHT_PT_ISSUE": issue,
                                                  "FORESIGHT_STATS": str(stats)})
            assert run.returncode == 0, run.stderr
            assert run.stdout == want
            g = json.loads(stats.read_text())["global"]
            if g["pt_issued"] > 0:
                break
        assert g["pt_started"] == 1 and g["pt_issued"] > 0
        if issue == "uring" and g["pt_issue"] != "uring":
            pytest.skip(f"no io_uring here: {g['pt_issue']}")
        assert g["pt_issue"] == issue
