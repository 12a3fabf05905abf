"""Coverage arithmetic (bench/coverage.py) on synthetic traces and array lines."""

from __future__ import annotations

import pytest

from foresight.bench import coverage as cov
from foresight.errors import BenchError

PAGE = 4096


def trace(tmp_path, name: str, lines: list[str], header: bool = True):
    p = tmp_path / name
    p.write_text(("# foresight trace 1 page=4096 pid=1\n" if header else "") +
                 "\n".join(lines) + "\n")
    return cov.parse_trace(p)


def test_pages_matched_by_array_and_offset_across_address_shifts(tmp_path):
    # The original run had array a at 0x100000, the hinted run at 0x900000.
    o_arrays = cov.parse_arrays("array a 65536 0x100000\narray b 8192 0x200000\n")
    p_arrays = cov.parse_arrays("phase x 1.0\narray a 65536 0x900000\narray b 8192 0xa00000\n")
    o = trace(tmp_path, "o", [f"F {0x100000 + i * PAGE:#x} {i} 0" for i in range(4)] +
              [f"F {0x200000:#x} 9 1", "F 0x5000 3 1", "L 0"])   # 0x5000: outside the arrays
    p = trace(tmp_path, "p", [
        f"P {0x900000:#x} 2 1 1 7",          # pages 0, 1 of a: prefetched
        f"F {0x900000 + PAGE:#x} 5 1",       # ... page 1 still faulted (late)
        f"P {0x900000 + 2 * PAGE:#x} 1 0 2 7", # page 2 prefetched, no fault: hit
        f"F {0x900000 + 3 * PAGE:#x} 4 1",   # page 3 never prefetched
        f"F {0xa00000:#x} 6 1",              # b page 0 never prefetched
        "L 2"])
    c = cov.coverage(o, o_arrays, p, p_arrays)
    assert c["original_fault_pages"] == 5
    assert c["prefetched_hit"] == pytest.approx(2 / 5)      # a0, a2
    assert c["prefetched_fault"] == pytest.approx(1 / 5)    # a1
    assert c["nonprefetched_fault"] == pytest.approx(2 / 5)  # a3, b0
    assert sum(c[k] for k in ("prefetched_hit", "prefetched_fault",
                              "nonprefetched_fault")) == pytest.approx(1)
    assert c["issued_unnecessary"] == pytest.approx(1 / 3)
    assert c["lost_fault_samples"] == {"O": 0, "P": 2}


def test_a_page_prefetched_after_its_fault_counts_as_a_prefetched_fault(tmp_path):
    arrays = cov.parse_arrays("array a 8192 0x10000\n")
    o = trace(tmp_path, "o", ["F 0x10000 1 1"])
    p = trace(tmp_path, "p", ["F 0x10000 1 1", "P 0x10000 1 1 2 3"])
    c = cov.coverage(o, arrays, p, arrays)
    assert c["prefetched_fault"] == 1.0


def test_no_faults_in_the_original_gives_zero_fractions(tmp_path):
    arrays = cov.parse_arrays("array a 8192 0x10000\n")
    o = trace(tmp_path, "o", [])
    c = cov.coverage(o, arrays, o, arrays)
    assert c["original_fault_pages"] == 0 and c["prefetched_hit"] == 0.0


def test_bad_traces_are_clear_errors(tmp_path):
    with pytest.raises(BenchError, match="not a foresight trace"):
        trace(tmp_path, "x", ["F 0x1000 1 1"], header=False)
    with pytest.raises(BenchError, match=r"x:2: malformed"):
        trace(tmp_path, "x", ["F zz 1 1"])
    with pytest.raises(BenchError, match="unreadable"):
        cov.parse_trace(tmp_path / "missing")
    arrays = cov.parse_arrays("array a 8192 0x10000\n")
    blind = trace(tmp_path, "b", ["# faults unavailable: Permission denied"])
    with pytest.raises(BenchError, match="no fault records"):
        cov.coverage(blind, arrays, blind, arrays)
