"""`foresight sim`'s replacement against libCacheSim's (pip `libcachesim`, the reference
cache simulator the issue names): one client, the trace's own order (`--serial`), no
prefetching, so every demand request reaches the one I/O node and the two simulators see
the same sequence.  LRU must miss exactly where libCacheSim's LRU misses, and MIN exactly
as often as libCacheSim's Belady."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

lc = pytest.importorskip("libcachesim", reason="libCacheSim's wheels are for Linux x86-64")

FORESIGHT = [sys.executable, "-m", "foresight.cli"]
INT64_MAX = 2**63 - 1   # libCacheSim's "no next access"


def requests(seed: int, n: int = 20000, blocks: int = 3000) -> list[int]:
    """A hot set of a tenth of the blocks takes three requests in four."""
    rng = random.Random(seed)
    return [rng.randrange(blocks // 10) if rng.random() < 0.75 else rng.randrange(blocks)
            for _ in range(n)]


def ours(tmp_path: Path, seq: list[int], capacity: int, replacement: str) -> int:
    trace = tmp_path / "t.trace"
    trace.write_text("".join(f"0 R {b}\n" for b in seq))
    out = tmp_path / f"{replacement}.json"
    p = subprocess.run([*FORESIGHT, "sim", "--trace", str(trace), "--serial", "--policy", "none",
                        "--replacement", replacement, "--cache", str(capacity), "--block", "1",
                        "--json", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(out.read_text())["clients"][0]["misses"]


def theirs(seq: list[int], capacity: int, cache_class) -> int:
    later: dict[int, int] = {}
    nxt = [0] * len(seq)
    for i in range(len(seq) - 1, -1, -1):   # each request's block's next position
        nxt[i] = later.get(seq[i], INT64_MAX)
        later[seq[i]] = i
    cache = cache_class(cache_size=capacity)
    # obj_id 0 is libCacheSim's "no object": shift the block numbers by one
    return sum(not cache.get(lc.Request(obj_id=b + 1, obj_size=1, next_access_vtime=n))
               for b, n in zip(seq, nxt, strict=True))


@pytest.mark.parametrize("seed,capacity", [(1, 100), (2, 500)])
def test_lru_and_min_miss_as_libcachesim_does(tmp_path, seed, capacity):
    seq = requests(seed)
    lru, belady = theirs(seq, capacity, lc.LRU), theirs(seq, capacity, lc.Belady)
    assert belady < lru   # the trace tells the two apart
    assert ours(tmp_path, seq, capacity, "lru") == lru
    assert ours(tmp_path, seq, capacity, "min") == belady
