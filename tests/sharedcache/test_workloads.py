"""The shared-cache workloads: valid traces, the same for the same inputs, every client
at every barrier, and hints that name blocks the client then reads."""

from __future__ import annotations

from collections import Counter

import pytest

from foresight.sharedcache.workloads import NAMES, write_trace


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("clients", [1, 3, 8])
def test_a_workload_is_a_valid_deterministic_spmd_trace(tmp_path, name, clients):
    a, b = tmp_path / "a.trace", tmp_path / "b.trace"
    n = write_trace(name, a, clients, 4096, think=50)
    write_trace(name, b, clients, 4096, think=50)
    assert a.read_bytes() == b.read_bytes()
    lines = [ln.split() for ln in a.read_text().splitlines() if not ln.startswith("#")]
    assert len(lines) == n
    barriers = Counter(int(c) for c, op, *_ in lines if op == "B")
    assert len(barriers) == clients and len(set(barriers.values())) == 1
    for cid in range(clients):
        mine = [(op, int(blk)) for c, op, blk, *_ in lines if int(c) == cid]
        reads = {blk for op, blk in mine if op == "R"}
        hinted = {blk for op, blk in mine if op == "P"}
        assert reads, "every client reads"
        assert hinted <= reads, "a hint names a block the client reads"
        assert max(blk for _, blk in mine) < 4096, "within the data"
