"""The balloon cap (`foresight run --cap balloon`): physical memory taken away from the
whole machine, the way the paper's experiments limited it, instead of a memory cgroup.

A helper process outside the program's cgroup locks anonymous memory (mlock) until the
free memory above the kernel's reclaim watermarks (`headroom`) is down to the cap; the program then
runs with no memory limit of its own and pages out under the kernel's global reclaim
(kswapd), which keeps up where the v1 memory cgroup's reclaim in the faulting thread
does not: NAS MG's original, 450 MiB under a 150 MiB v1 cap, was OOM-killed with 8 GiB
of swap free in 4 of 4 runs (the cgroup full of active, swap-cached anonymous memory,
none inactive, even with vm.page-cluster 0); see docs/decisions.md.

The cap is the machine's: the program shares the memory left with every other process
(and their pages may be swapped out too), so measure on an idle machine.  The balloon
asks the kernel to kill it first (oom_score_adj 1000); a balloon that dies during the
run leaves the program uncapped, and the run says so (`cap_lost`).  Needs root (locking
gigabytes).  Run as `python -m foresight.harness.balloon BYTES`: it prints `ready
LOCKED AVAILABLE` once inflated and holds the memory until its stdin closes.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import select
import subprocess
import sys
from pathlib import Path

from foresight.errors import HarnessError
from foresight.units import format_size

# Inflation steps: large while far from the target, then small (MemAvailable moves
# with the page cache the kernel reclaims meanwhile).
_BIG, _SMALL = 256 << 20, 8 << 20
# How long the harness waits for the balloon to inflate (24 GiB locks in a few seconds).
_INFLATE_TIMEOUT = 120.0


def headroom() -> int:
    """Bytes a program can still take without reclaim pushing back: MemFree less the
    zones' high watermarks (kswapd reclaims until free memory is back above them).
    MemAvailable is not it: it also leaves out the lowmem reserves, which user pages
    may take (with it as the target, NAS MG peaked at 433 MiB under a 150 MiB
    balloon)."""
    free = None
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemFree:"):
            free = int(line.split()[1]) * 1024
    if free is None:
        raise HarnessError("/proc/meminfo has no MemFree")
    high = 0
    for line in Path("/proc/zoneinfo").read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "high" and parts[1].isdigit():
            high += int(parts[1])
    return free - high * os.sysconf("SC_PAGE_SIZE")


def _inflate(target: int) -> tuple[int, int]:
    """In the balloon process: lock memory until the headroom is at most `target`;
    (bytes locked, headroom then)."""
    Path("/proc/self/oom_score_adj").write_text("1000")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    chunks, locked = [], 0
    while (avail := headroom()) > target:
        size = _BIG if avail - target > 2 * _BIG else _SMALL
        m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        if libc.mlock(ctypes.c_void_p(addr), ctypes.c_size_t(size)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mlock: {os.strerror(err)}")
        chunks.append(m)
        locked += size
    _inflate.chunks = chunks   # held until the process exits
    return locked, headroom()


class Balloon:
    """The balloon process for one run: inflated on construction, gone on close()."""

    def __init__(self, mem: int):
        if os.geteuid() != 0:
            raise HarnessError("--cap balloon needs root (it locks most of the machine's "
                               "memory)")
        self.mem = mem
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "foresight.harness.balloon", str(mem)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], _INFLATE_TIMEOUT)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("ready "):
            self.close()
            err = (self.proc.stderr.read() if self.proc.stderr else "").strip()
            raise HarnessError(f"--cap balloon {format_size(mem)}: the balloon could not "
                               f"inflate{': ' + err.splitlines()[-1] if err else ''}")
        _, locked, available = line.split()
        self.locked, self.available = int(locked), int(available)

    def lost(self) -> bool:
        """Whether the balloon died (the kernel's OOM killer): the program ran uncapped."""
        return self.proc.poll() is not None

    def describe(self) -> str:
        return (f"balloon ({format_size(self.locked)} locked outside the program, "
                f"{format_size(self.available)} available)")

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _main(argv: list[str]) -> int:
    target = int(argv[1])
    try:
        locked, available = _inflate(target)
    except OSError as e:
        print(f"cannot lock memory: {e.strerror}", file=sys.stderr)
        return 1
    print(f"ready {locked} {available}", flush=True)
    sys.stdin.read()   # until the harness closes it (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
