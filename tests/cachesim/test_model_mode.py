"""`foresight cachesim --model`: a program's accesses generated from its color map's
loops.  The model's accesses are exactly the units its summaries name, line by line;
the case the paper is about (each CPU's share of the arrays fits its cache, but page
coloring by address puts the arrays' shares on the same colors) gives page coloring
conflict misses and CDPC none; a model needs a map and excludes a trace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FORESIGHT = [sys.executable, "-m", "foresight.cli"]
PAGE = 4096
ARRAY = 1 << 20          # bytes: one per array, the size of the cache below
ROWS = ARRAY // PAGE      # a unit of a page: 256 rows per array


def write_map(path: Path, arrays: int, threads: int) -> None:
    """`arrays` arrays of 1 MiB back to back, one loop partitioning all of them by
    pages (blocked), the first read with a shift of one page too."""
    lines = ["foresight-color-map 1", f"page {PAGE}"]
    base = 0x10000000
    for a in range(arrays):
        lines.append(f"array {base + a * ARRAY:#x} {ARRAY}")
    for a in range(arrays):
        access = "w" if a == arrays - 1 else "r"
        lines.append(f"ref {base + a * ARRAY:#x} {PAGE} 0 {ROWS} 0 0 blocked {threads} 7 0 "
                     f"{access}")
    lines.append(f"ref {base:#x} {PAGE} 0 {ROWS} 1 0 blocked {threads} 7 0 r")
    path.write_text("\n".join(lines) + "\n")


def simulate(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*FORESIGHT, "cachesim", *args], capture_output=True, text=True,
                          cwd=tmp)


def model(tmp: Path, policy: str, cpus: int, steps: int = 1) -> dict:
    p = simulate(tmp, "--cpus", str(cpus), "--l2", "1M,1,128", "--page", "4K",
                 "--policy", policy, "--map", "m.map", "--model", str(steps))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_model_accesses_every_unit_line_by_line(tmp_path):
    write_map(tmp_path / "m.map", arrays=4, threads=1)
    r = model(tmp_path, "pc", cpus=8, steps=3)
    lines_per_array = ARRAY // 128
    # per step: four arrays once and the shifted first array but its first page
    per_step = 4 * lines_per_array + (ROWS - 1) * (PAGE // 128)
    assert r["accesses"] == 3 * per_step
    assert r["config"]["model_steps"] == 3 and r["barriers"] == 3
    assert r["misses"]["cold"] == 0          # the warm-up step held every line once


def test_cdpc_removes_the_conflicts_page_coloring_makes(tmp_path):
    # 8 arrays of 1 MiB over 16 CPUs: each CPU's share is 8 x 64 KiB, half the cache,
    # but page coloring puts the eight shares of a CPU on the same 16 colors.
    write_map(tmp_path / "m.map", arrays=8, threads=4)
    pc, cdpc = model(tmp_path, "pc", 16), model(tmp_path, "cdpc", 16)
    assert pc["misses"]["conflict"] > 10_000
    assert cdpc["misses"]["conflict"] == 0
    assert cdpc["misses"]["capacity"] == 0


def test_pages_lists_each_cpus_pages_and_their_colors(tmp_path):
    # 4 arrays of 1 MiB, blocked over 4 CPUs: each CPU touches a quarter of each array
    # (64 pages of each) plus, for the shift, one page of its neighbour's share of the
    # first array; page coloring puts a CPU's four quarters on the same 64 colors, CDPC
    # on 256 different ones.
    write_map(tmp_path / "m.map", arrays=4, threads=4)
    out = {}
    for pol in ("pc", "cdpc"):
        p = simulate(tmp_path, "--cpus", "4", "--l2", "1M,1,128", "--page", "4K",
                     "--policy", pol, "--map", "m.map", "--model", "1", "--pages")
        assert p.returncode == 0, p.stderr
        out[pol] = json.loads(p.stdout)
    pages = out["pc"]["pages"]
    assert len(pages) == out["pc"]["pages_mapped"] == 4 * ROWS
    assert sorted(v for v, _, _ in pages) == sorted({v for v, _, _ in pages})
    ncolors = out["pc"]["config"]["ncolors"]
    for pol, colors in (("pc", 64), ("cdpc", 256)):
        for cpu in range(4):
            mine = [f % ncolors for v, f, mask in out[pol]["pages"] if mask >> cpu & 1]
            assert len(mine) == 4 * (ROWS // 4) + (cpu < 3), (pol, cpu)
            assert len(set(mine)) >= colors, (pol, cpu, len(set(mine)))
            if pol == "pc":
                assert len(set(mine)) <= colors + 1
    assert "pages" not in model(tmp_path, "pc", 4)      # only when asked


def test_model_needs_a_map_and_no_trace(tmp_path):
    write_map(tmp_path / "m.map", arrays=1, threads=1)
    (tmp_path / "t.txt").write_text("0 R 0x1000\n")
    p = simulate(tmp_path, "--cpus", "2", "--preset", "sgi", "--model", "1")
    assert p.returncode == 2 and "--model needs --map" in p.stderr
    p = simulate(tmp_path, "--cpus", "2", "--preset", "sgi", "--model", "1", "--map", "m.map",
                 "--trace", "t.txt")
    assert p.returncode == 2 and "one of them" in p.stderr
    p = simulate(tmp_path, "--cpus", "2", "--preset", "sgi", "--model", "0", "--map", "m.map")
    assert p.returncode == 2 and "--model '0'" in p.stderr


def map_lines(*arrays: tuple[int, int], refs: list[str]) -> str:
    """A color map's text: its page, the ARRAYS (base, bytes) and the records REFS."""
    return "\n".join(["foresight-color-map 1", f"page {PAGE}",
                      *(f"array {base:#x} {size}" for base, size in arrays), *refs]) + "\n"


def write_walk_map(path: Path, walks: bool) -> None:
    """Two arrays 1 MiB apart (so page coloring puts their equal offsets in the same
    direct-mapped set), one loop over their pages on one thread whose inner loop reads
    a[k][i] and b[k][i] element by element (8 bytes); with WALKS, its `access` records."""
    a, b = 0x10000000, 0x10000000 + ARRAY
    refs = [f"ref {base:#x} {PAGE} 0 {ROWS} 0 0 even 1 9 0 r" for base in (a, b)]
    if walks:
        refs += [f"access {base:#x} {PAGE} 0 {ROWS} 0 0 8 9 1 {seq} f r"
                 for seq, base in enumerate((a, b))]
    path.write_text(map_lines((a, ARRAY), (b, ARRAY), refs=refs))


def test_access_records_walk_each_element_and_colliding_references_miss_on_each(tmp_path):
    write_walk_map(tmp_path / "m.map", walks=True)
    r = model(tmp_path, "pc", cpus=1, steps=2)
    assert r["accesses"] == 2 * 2 * ARRAY // 8          # every element of both, per step
    # a and b evict each other at every element: a miss each, capacity misses only for
    # the first element of a line (the two arrays are twice the cache)
    assert r["misses"]["total"] == r["accesses"]
    assert r["misses"]["capacity"] == 2 * 2 * ARRAY // 128
    write_walk_map(tmp_path / "m.map", walks=False)
    lines = model(tmp_path, "pc", cpus=1, steps=2)
    assert lines["accesses"] == lines["misses"]["total"] == 2 * 2 * ARRAY // 128
    # CDPC puts the two arrays on different colors: no conflict either way
    write_walk_map(tmp_path / "m.map", walks=True)
    assert model(tmp_path, "cdpc", cpus=1, steps=2)["misses"]["conflict"] == 0


def test_a_reference_that_stays_is_one_access_per_iteration(tmp_path):
    # stride 0 (b[k][0] in the parallel loop's own body, phase 0) beside a walk of a
    a, b = 0x10000000, 0x10000000 + ARRAY
    (tmp_path / "m.map").write_text(map_lines((a, ARRAY), (b, ARRAY), refs=[
        f"ref {a:#x} {PAGE} 0 {ROWS} 0 0 even 1 9 0 r",
        f"ref {b:#x} {PAGE} 0 {ROWS} 0 0 even 1 9 0 w",
        f"access {b:#x} {PAGE} 0 {ROWS} 0 0 0 9 0 0 f w",
        f"access {a:#x} {PAGE} 0 {ROWS} 0 0 -8 9 1 1 v r"]))
    r = model(tmp_path, "pc", cpus=1, steps=1)
    assert r["accesses"] == ROWS * (1 + PAGE // 8)
    assert r["writes"] == ROWS


def test_a_bad_access_record_is_one_message(tmp_path):
    (tmp_path / "m.map").write_text(
        f"foresight-color-map 1\npage {PAGE}\naccess 0x1000 4096 0 8 0 0 8 9 1 0 x r\n")
    p = simulate(tmp_path, "--cpus", "1", "--l2", "1M,1,128", "--page", "4K", "--policy",
                 "pc", "--map", "m.map", "--model", "1")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "field 11 of `access`, 'x', is not f or v" in p.stderr


def test_a_step_leaves_out_the_loops_that_ran_once(tmp_path):
    # loop 1 (initialisation, AGAIN 0) writes a; loop 2 (the time step, AGAIN 1) reads b:
    # a step is loop 2 alone.  Without any AGAIN both run each step.
    a, b = 0x10000000, 0x10000000 + ARRAY
    for again, want in (("1", ARRAY // 128), ("0", 2 * ARRAY // 128)):
        (tmp_path / "m.map").write_text(map_lines((a, ARRAY), (b, ARRAY), refs=[
            f"ref {a:#x} {PAGE} 0 {ROWS} 0 0 even 1 1 0 w 0 0",
            f"ref {b:#x} {PAGE} 0 {ROWS} 0 0 even 1 2 0 r 1 {again}"]))
        r = model(tmp_path, "pc", cpus=1, steps=1)
        assert r["accesses"] == want, again
        assert r["writes"] == (0 if again == "1" else ARRAY // 128)


def test_walks_belong_to_the_run_they_came_with(tmp_path):
    # One loop run twice with its arrays swapped (step(a, b); step(b, a)): calls 1 and 2.
    # Each run walks its own two references, not the other run's too.
    a, b = 0x10000000, 0x10000000 + 2 * ARRAY
    refs = []
    for call, (src, dst) in ((1, (a, b)), (2, (b, a))):
        refs += [f"ref {src:#x} {PAGE} 0 {ROWS} 0 0 even 1 9 0 r {call} 1",
                 f"ref {dst:#x} {PAGE} 0 {ROWS} 0 0 even 1 9 0 w {call} 1",
                 f"access {src:#x} {PAGE} 0 {ROWS} 0 0 8 9 1 0 f r {call}",
                 f"access {dst:#x} {PAGE} 0 {ROWS} 0 0 8 9 1 1 f w {call}"]
    (tmp_path / "m.map").write_text(map_lines((a, ARRAY), (b, ARRAY), refs=refs))
    r = model(tmp_path, "pc", cpus=1, steps=1)
    assert r["accesses"] == 2 * 2 * ARRAY // 8
    assert r["writes"] == 2 * ARRAY // 8


def test_a_walk_stays_in_its_own_unit(tmp_path):
    # a[j][l] inside the walk of v[j][k][l]: a's unit (a page) is walked again for each of
    # v's four pages, never into the next thread's rows.  Each of a's pages: one CPU.
    a, v = 0x10000000, 0x20000000
    (tmp_path / "m.map").write_text(map_lines((a, ARRAY), (v, 4 * ARRAY), refs=[
        f"ref {a:#x} {PAGE} 0 {ROWS} 0 0 blocked 2 9 0 r",
        f"ref {v:#x} {4 * PAGE} 0 {ROWS} 0 0 blocked 2 9 0 w",
        f"access {v:#x} {4 * PAGE} 0 {ROWS} 0 0 8 9 2 0 f w",
        f"access {a:#x} {PAGE} 0 {ROWS} 0 0 8 9 2 1 f r"]))
    p = simulate(tmp_path, "--cpus", "2", "--l2", "1M,1,128", "--page", "4K", "--policy",
                 "pc", "--map", "m.map", "--model", "1", "--pages")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["accesses"] == 2 * ROWS * 4 * PAGE // 8
    a_pages = [mask for vp, _, mask in r["pages"] if a >> 12 <= vp < (a + ARRAY) >> 12]
    assert len(a_pages) == ROWS and all(mask in (1, 2) for mask in a_pages)
