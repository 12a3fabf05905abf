"""Coverage of prefetching, measured from real faults (the paper's Figure 12(a)).

Inputs are two runs of the same NAS-style kernel: the original (O, built with
`--no-prefetch`) and the hinted one (P), each traced with `FORESIGHT_TRACE`
(F lines: faults that waited for I/O; P lines: prefetches handed to the kernel)
and each printing its main arrays as `array NAME BYTES ADDRESS` on stderr.
Addresses differ between runs, so a page is identified by (array, page offset).

Of the pages the original run faulted on:
- prefetched hit: P prefetched the page and did not fault on it;
- prefetched fault: P prefetched it and still faulted (too late — the read was
  in flight, a fault after its P line — or evicted again before use);
- nonprefetched fault: P never handed a prefetch for it to the kernel (never
  hinted, filtered as resident, or dropped for budget or a full queue).
The three fractions sum to 1.  Faults outside the main arrays (stack, code,
small tables) are not counted.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path

from foresight.errors import BenchError

PAGE = 4096


@dataclass
class Trace:
    faults: list[int] = field(default_factory=list)            # page addresses
    prefetches: list[tuple[int, int, int]] = field(default_factory=list)  # addr, n, resident
    lost: int = 0
    faults_available: bool = True


def parse_trace(path: str | Path) -> Trace:
    """Read a FORESIGHT_TRACE file (format in runtime/include/foresight.h)."""
    t = Trace()
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise BenchError(f"trace {path} unreadable: {e.strerror}") from None
    if not text.startswith("# foresight trace 1"):
        raise BenchError(f"{path} is not a foresight trace (no '# foresight trace 1' header)")
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            if parts[0] == "F":
                t.faults.append(int(parts[1], 16) & ~(PAGE - 1))
            elif parts[0] == "P":
                t.prefetches.append((int(parts[1], 16), int(parts[2]), int(parts[3])))
            elif parts[0] == "L":
                t.lost += int(parts[1])
            elif line.startswith("# faults unavailable"):
                t.faults_available = False
        except (IndexError, ValueError):
            raise BenchError(f"{path}:{n}: malformed trace line {line!r}") from None
    return t


@dataclass(frozen=True)
class Array:
    name: str
    start: int
    size: int


def parse_arrays(stderr: str) -> list[Array]:
    """The kernel's `array NAME BYTES ADDRESS` lines, sorted by address."""
    out = []
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "array":
            try:
                out.append(Array(parts[1], int(parts[3], 16), int(parts[2])))
            except ValueError:
                continue
    return sorted(out, key=lambda a: a.start)


class Locator:
    """Page address -> (array name, page offset within the array), or None."""

    def __init__(self, arrays: list[Array]):
        self.arrays = arrays
        self.starts = [a.start for a in arrays]

    def __call__(self, addr: int) -> tuple[str, int] | None:
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return None
        a = self.arrays[i]
        if addr >= a.start + a.size:
            return None
        return a.name, (addr - a.start) // PAGE


def coverage(o: Trace, o_arrays: list[Array], p: Trace, p_arrays: list[Array]) -> dict:
    """Fractions of the original run's faulting pages, and how the counts were made."""
    if not (o.faults_available and p.faults_available):
        raise BenchError("a trace has no fault records (perf_event_open unavailable): "
                         "coverage cannot be measured")
    loc_o, loc_p = Locator(o_arrays), Locator(p_arrays)
    o_pages = {k for k in map(loc_o, o.faults) if k is not None}
    p_faulted = {k for k in map(loc_p, p.faults) if k is not None}
    prefetched: set[tuple[str, int]] = set()
    issued = resident = 0
    for addr, n, res in p.prefetches:
        issued += n
        resident += res
        for i in range(n):
            k = loc_p(addr + i * PAGE)
            if k is not None:
                prefetched.add(k)
    hit = len(o_pages & prefetched - p_faulted)
    late = len(o_pages & prefetched & p_faulted)
    never = len(o_pages - prefetched)
    total = hit + late + never
    def frac(x: int) -> float:
        return x / total if total else 0.0

    return {
        "prefetched_hit": frac(hit), "prefetched_fault": frac(late),
        "nonprefetched_fault": frac(never),
        "original_fault_pages": total,
        "hinted_fault_pages": len(p_faulted),
        "pages_issued": issued,
        "issued_unnecessary": resident / issued if issued else 0.0,
        "lost_fault_samples": {"O": o.lost, "P": p.lost},
    }
