"""The prefetch thread's memory beside the program's: a program that reads a file into a
buffer it grows with realloc keeps its reads predicted (the slice needs the buffer's
address, not its bytes), and the thread's copy of the buffer, grown alike, stays
untouched.  A helper's probe: the thread held the file a second time (lead reads, then
whole copies at each doubling), and a cap the program fits OOM-killed the hinted build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
MiB = 1 << 20

SLURP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 2;
    size_t cap = 1 << 20, len = 0;
    char *b = malloc(cap);
    for (;;) {
        if (len == cap) { cap *= 2; b = realloc(b, cap); if (!b) return 3; }
        ssize_t g = read(fd, b + len, cap - len);
        if (g < 0) return 4;
        if (g == 0) break;
        len += g;
    }
    unsigned long h = 0;
    for (size_t i = 0; i < len; i += 4096) h = h * 31 + (unsigned char)b[i];
    printf("len=%zu h=%lx\n", len, h);
    return 0;
}
"""


def peak_rss(cmd: list[str], env: dict) -> tuple[str, int]:
    """stdout and the peak resident memory (bytes) of CMD, run as a child of its own."""
    code = ("import resource, subprocess, sys; "
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "sys.stdout.write(p.stdout); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
            "sys.exit(p.returncode)")
    p = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True,
                       env=env, check=True)
    *out, rss = p.stdout.splitlines()
    return "\n".join(out) + "\n", int(rss) * 1024


def test_a_buffer_grown_by_realloc_is_not_held_twice(tmp_path):
    (tmp_path / "s.c").write_text(SLURP)
    subprocess.run(["cc", "-O2", "s.c", "-o", "plain"], cwd=tmp_path, check=True)
    p = subprocess.run([FORESIGHT, "cc", "-O2", "--prefetch-thread", "--report", "s.c", "-o",
                        "threaded"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "`read` in main: predicted read" in p.stderr
    data = tmp_path / "data"
    with open(data, "wb") as f:
        f.write(os.urandom(MiB) * 96)        # 96 MiB: the buffer grows to 128 MiB
    stats = tmp_path / "stats.json"
    env = {**os.environ, "FORESIGHT_PT_DRAIN": "1", "FORESIGHT_STATS": str(stats)}
    want, plain_rss = peak_rss([str(tmp_path / "plain"), str(data)], env)
    got, rss = peak_rss([str(tmp_path / "threaded"), str(data)], env)
    assert got == want
    g = json.loads(stats.read_text())["global"]
    assert g["pt_started"] == 1 and g["pt_stopped"] is None, g
    # the thread's own memory: its stack and arena as used, far from a second 96 MiB
    assert rss < plain_rss + 24 * MiB, (rss / MiB, plain_rss / MiB)
