"""Memory counts as short only when what fills the cgroup must be written to go: under
`foresight run --mem`, a file read through a mapping fills the cgroup with clean page
cache, which its reclaim drops for free, so a release of anonymous memory waits (it is
remembered, the pages stay); once anonymous memory itself fills 3/4 of the limit, the
next release is carried out.  The data is intact either way."""

import json
import os
import subprocess
import sys
from pathlib import Path

from foresight import config

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")

PROGRAM = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <foresight.h>

static size_t resident(const char *p, size_t len) {
    static unsigned char vec[1 << 16];
    size_t n = 0;
    if (mincore((void *)p, len, vec) != 0) return 0;
    for (size_t i = 0; i < len / 4096; i++) n += vec[i] & 1;
    return n;
}

int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return 2;
    const char *f = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    size_t len = 8u << 20;
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (f == MAP_FAILED || a == MAP_FAILED) return 2;
    /* A first hint now, so the runtime's worker is awake (workers.c) before memory is
     * short: the release below is timed by the sleeps, not by its waking. */
    foresight_prefetch(f, 4096);
    memset(a, 7, len);
    unsigned long sum = 0;
    for (off_t i = 0; i < st.st_size; i += 4096) sum += (unsigned char)f[i];
    usleep(30000); /* past the 10 ms between usage readings */
    FORESIGHT_SITE(site, "a");
    foresight_release_at(&site, a, len);
    usleep(100000);
    printf("clean %lu %zu\n", sum, resident(a, len));
    /* Anonymous memory past 3/4 of the limit: the next release is carried out. */
    size_t big = (size_t)atol(argv[2]) << 20;
    char *b = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) return 2;
    memset(b, 1, big);
    usleep(30000);
    foresight_release_at(&site, b, 1u << 20);
    usleep(100000);
    for (size_t i = 0; i < len; i++)
        if (a[i] != 7) return 3;
    for (size_t i = 0; i < big; i += 4096)
        if (b[i] != 1) return 3;
    printf("intact\n");
    return 0;
}
"""


def test_clean_page_cache_is_no_pressure(cc, tmp_path):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "p"
    subprocess.run([cc, "-O2", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    data = tmp_path / "data"
    with open(data, "wb") as fh:
        for _ in range(192):
            fh.write(b"\1" * (1 << 20))
    stats = tmp_path / "stats.json"
    r = subprocess.run([FORESIGHT, "run", "--mem", "64M", "--cold", "--", str(exe), str(data),
                        "56"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "FORESIGHT_STATS": str(stats)})
    assert r.returncode == 0, r.stderr
    clean = next(line for line in r.stdout.splitlines() if line.startswith("clean "))
    assert clean.split()[2] == str((8 << 20) // 4096)   # the released pages stayed
    assert "intact" in r.stdout
    s = json.loads(stats.read_text())
    assert s["config"]["mem_limit_source"].startswith("cgroup")
    g = s["global"]
    # The first release waited, the second was made (over the pages of b still
    # resident: the cgroup's reclaim may have swapped some of them out already).
    assert g["releases_idle"] == 1
    assert g["pages_deactivated"] + g["pages_freed"] > 0
