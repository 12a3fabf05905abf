"""schedule/plan.py on its own: which references get hints, across which loop (paper 1's
Section 3.2.2.2), which versions are chosen at nest entry, what is released behind
them, and Eq. (1)'s distance, on loop nests built by hand (tests/compiler/conftest.py).

Each refusal is shown against the same nest that is hinted, with the one fact changed
that refuses it, so the tests read the plan's data, not its prose.
"""

from __future__ import annotations

import math

from foresight.compiler.options import CompileOptions
from foresight.compiler.schedule import distance
from foresight.compiler.schedule.distance import iteration_cycles, paper_distance
from foresight.compiler.schedule.plan import MAX_HINTS

ROW = 1 << 16   # doubles in a row: 512 KiB, more than a 64 KiB block


def hints(p) -> list[tuple]:
    """(reference, pipelining loop) of each hint, in order."""
    return [(h.ref.text, h.pipe.var) for h in p.hints]


def hinted(p) -> set[str]:
    return {h.ref.text for h in p.hints}


def named(p) -> set[str]:
    """The references the plan's decisions speak of (each decision starts with one)."""
    return {d.split(": ", 1)[0] for d in p.decisions}


def test_pipelining_loop_is_the_innermost_loop_changing_the_address(ir):
    # Section 3.2.2.2: A[i][j] moves with j inside i; a column walk moves with i inside j.
    rows = ir.plan(ir.loop("i", 1 << 12, ir.loop("j", ROW, ir.ref("A[i][j]", dims=(ROW,)))))
    assert hints(rows) == [("A[i][j]", "j")]
    (h,) = rows.hints
    assert h.inner_at_lower == [] and h.version is None
    cols = ir.plan(ir.loop("j", ROW, ir.loop("i", 1 << 12, ir.ref("A[i][j]", dims=(ROW,)))))
    assert hints(cols) == [("A[i][j]", "i")]
    # x[i] does not move with j: i is the innermost loop changing it.
    inv = ir.plan(ir.loop("i", 1 << 20, ir.loop("j", 100, ir.ref("x[i]"))))
    assert hints(inv) == [("x[i]", "i")]


def test_a_loop_touching_less_than_a_block_passes_the_pipeline_outward(ir):
    # Section 3.2.2.2 (Figure 8): five iterations of j cover 40 bytes, so pipelining
    # across j would never reach a steady state; i is pipelined, j taken at its lower
    # bound in the address computed ahead.
    p = ir.plan(ir.loop("i", 1 << 20, ir.loop("j", 5, ir.ref("A[i][j]", dims=(5,)))))
    assert hints(p) == [("A[i][j]", "i")]
    assert [lp.var for lp in p.hints[0].inner_at_lower] == ["j"]
    # A row of 4,096 doubles (32 KiB) is still less than a 64 KiB block; a larger block
    # size keeps a row of 2**16 doubles (512 KiB) inside too.
    assert hints(ir.plan(ir.loop("i", 1 << 12, ir.loop(
        "j", 1 << 12, ir.ref("A[i][j]", dims=(1 << 12,)))))) == [("A[i][j]", "i")]
    assert hints(ir.plan(ir.loop("i", 1 << 12, ir.loop(
        "j", ROW, ir.ref("A[i][j]", dims=(ROW,)))), block_size=1 << 20)) == [("A[i][j]", "i")]


def test_a_trip_count_known_only_at_run_time_gets_one_version_per_candidate(ir):
    # j runs w iterations: both j and i are candidates, the nest's entry tests whether j
    # touches less than a block in all and takes one (Section 5.3.1's "multiple
    # versions ... chosen dynamically").
    p = ir.plan(ir.loop("i", "n", ir.loop("j", "w", ir.ref("A[i][j]", dims=("m",)))))
    assert hints(p) == [("A[i][j]", "j"), ("A[i][j]", "i")]
    first, second = p.hints
    assert (first.version.taken, second.version.taken) == (0, 1)
    assert [m.loop.var for m in first.version.moves] == ["j"]
    assert first.version.moves == second.version.moves
    assert [lp.var for lp in second.inner_at_lower] == ["j"]


def test_data_too_small_for_a_block_is_left_to_demand_paging(ir):
    # A 5x5 matrix (200 bytes over the nest), an object of 4 KiB, an invariant address:
    # no hint; the same references over large data are hinted.
    assert ir.plan(ir.loop("p", 5, ir.loop("r", 5, ir.ref("d[r][p]", dims=(5,))))).hints == []
    assert hinted(ir.plan(ir.loop("p", "n", ir.loop(
        "r", "n", ir.ref("d[r][p]", dims=("n",)))))) == {"d[r][p]"}
    assert ir.plan(ir.loop("i", "n", ir.ref("d[i]", object_bytes=4096))).hints == []
    assert hints(ir.plan(ir.loop("i", "n", ir.ref("d[i]", object_bytes=1 << 20)))) == [
        ("d[i]", "i")]
    p = ir.plan(ir.loop("i", "n", ir.ref("s[0]")))
    assert p.hints == [] and named(p) == {"s[0]"}


def test_group_reuse_prefetches_the_leader_and_releases_behind_the_trailer(ir):
    # Section 3.1.4: a[i + 1] leads (prefetched ahead), a[i] trails (released behind).
    p = ir.plan(ir.loop("i", "n", ir.ref("a[i]"), ir.ref("a[i + 1]")))
    assert hints(p) == [("a[i + 1]", "i")]
    assert p.hints[0].release.text == "a[i]"
    assert named(p) == {"a[i]", "a[i + 1]"}   # the trailer's decision says why it has none


def test_data_without_reuse_outside_the_pipelining_loop_is_released(ir):
    p = ir.plan(ir.loop("i", "n", ir.loop("j", "m", ir.ref("a[m*i + j]"))))
    assert all(h.release is h.ref and h.release_if_exceeds is None for h in p.hints)


def test_data_reused_across_an_outer_loop_is_released_only_if_it_cannot_stay(ir):
    def w_hint(trip, **opts):
        (h,) = ir.plan(ir.loop("i", "n", ir.loop("k", trip, ir.ref("w[k]"))), **opts).hints
        return h

    # w[k] is reused by every i.  8 MiB an iteration of i: at most an eighth of the
    # 64 MiB assumed, kept (not released).
    assert w_hint(1 << 20).release is None
    # 128 MiB: more than memory, released; under the adaptive preset the nest's entry
    # still tests the volume against the memory at run time.
    big = w_hint(1 << 24)
    assert big.release.text == "w[k]" and big.release_if_exceeds.var == "i"
    assert big.volume is not None
    # A volume unknown at compile time is measured at entry, likewise.
    unknown = w_hint("m")
    assert unknown.release.text == "w[k]" and unknown.release_if_exceeds.var == "i"
    # The paper decides with the memory assumed at compile time only.
    assert w_hint(1 << 20, preset="paper").release is None
    paper = w_hint(1 << 24, preset="paper")
    assert paper.release.text == "w[k]" and paper.release_if_exceeds is None


def test_only_data_reused_across_the_outer_loop_counts_for_keeping_it(ir):
    # For each i, w[k] is read again and a row of A streamed once: 8 MiB of w and 128 MiB
    # of A an iteration.  A is released behind its stream (no reuse across i), so only w
    # need stay between iterations: an eighth of the 64 MiB assumed, kept; the paper
    # counts both (its localized space) and releases w too.
    def plan(**opts):
        return ir.plan(ir.loop("i", "n", ir.loop(
            "k", 1 << 20, ir.ref("w[k]"), ir.ref("A[i][k]", dims=(1 << 20,), elem=128))),
            **opts)
    by_ref = {h.ref.text: h for h in plan().hints}
    assert by_ref["w[k]"].release is None
    assert by_ref["A[i][k]"].release.text == "A[i][k]"
    by_ref = {h.ref.text: h for h in plan(preset="paper").hints}
    assert by_ref["w[k]"].release.text == "w[k]"


def test_indirect_reference_is_pipelined_with_its_index_running_ahead(ir):
    # Section 3.2.2.3: a[b[i]] is prefetched across i through the look-ahead load of b,
    # and b[i] itself is prefetched far enough ahead for that load to find it.
    b = ir.ref("b[i]", elem=4)
    p = ir.plan(ir.loop("i", "n", ir.indirect("a[b[i]]", b), b))
    assert sorted(hints(p)) == [("a[b[i]]", "i"), ("b[i]", "i")]
    by_ref = {h.ref.text: h for h in p.hints}
    assert by_ref["a[b[i]]"].indirect_index is b and by_ref["a[b[i]]"].release is None
    assert by_ref["b[i]"].feeds_indirect
    # --no-indirect: b[i] is an ordinary stream.
    off = ir.plan(ir.loop("i", "n", ir.indirect("a[b[i]]", b), b), indirect=False)
    assert hints(off) == [("b[i]", "i")] and not off.hints[0].feeds_indirect


def test_indirect_reference_is_not_prefetched_where_the_look_ahead_is_unsafe(ir):
    b = ir.ref("b[i]", elem=4)

    def indirect_hinted(**loop_fields) -> bool:
        p = ir.plan(ir.loop("i", "n", ir.indirect("a[b[i]]", b), b, **loop_fields))
        return any(h.indirect_index is not None for h in p.hints)

    assert indirect_hinted()
    assert not indirect_hinted(step=2)               # b[i + d] could skip past the end
    assert not indirect_hinted(body_exits=True)      # the loop may stop early
    assert not indirect_hinted(bounds_invariant=False)
    c = ir.ref("b[i]", elem=4, conditional=True)
    assert not any(h.indirect_index for h in ir.plan(ir.loop(
        "i", "n", ir.indirect("a[b[i]]", c, conditional=True), c)).hints)


def test_indirect_target_that_stays_in_memory_is_left_alone_unless_paper(ir):
    # An object of at most an eighth of memory stays resident once touched; the paper
    # prefetches every indirect reference.
    b = ir.ref("b[i]", elem=4)
    root = ir.loop("i", "n", ir.indirect("a[b[i]]", b, object_bytes=1 << 20), b)
    assert hints(ir.plan(root)) == [("b[i]", "i")]
    assert sorted(hints(ir.plan(root, preset="paper"))) == [("a[b[i]]", "i"), ("b[i]", "i")]
    big = ir.loop("i", "n", ir.indirect("a[b[i]]", b, object_bytes=1 << 30), b)
    assert ("a[b[i]]", "i") in hints(ir.plan(big))


def test_two_level_index_needs_a_small_table_in_the_middle(ir):
    # a[t[b[i]]]: the look-ahead reads t[b[i + d]], which is bounds-checked only when t's
    # size is known, and faults nothing only when t stays in memory.
    b = ir.ref("b[i]", elem=4)
    small = ir.indirect("t[b[i]]", b, elem=4, object_bytes=512)
    p = ir.plan(ir.loop("i", "n", ir.indirect("a[t[b[i]]]", small), small, b))
    (two,) = [h for h in p.hints if h.ref.text == "a[t[b[i]]]"]
    assert two.indirect_middle is small and two.indirect_index is b
    unknown = ir.indirect("t[b[i]]", b, elem=4)
    p = ir.plan(ir.loop("i", "n", ir.indirect("a[t[b[i]]]", unknown), unknown, b))
    assert "a[t[b[i]]]" not in hinted(p)


def test_sparse_rows_are_looked_ahead_across_unless_turned_off_or_unsafe(ir):
    # for (k = rp[i]; k < rp[i + 1]; k++) x[col[k]]: the look-ahead of col runs up to the
    # end of the last row, rp[last i + 1], instead of the current row's end.
    col = ir.ref("col[k]", elem=4)

    def csr_plan(row_fields: dict | None = None, **opts):
        row = ir.loop("k", "e", ir.indirect("x[col[k]]", col), col, lower="s",
                      csr=("rp", "i", ir.aff("i + 1")), bounds_invariant=False)
        return ir.plan(ir.loop("i", "n", row, **(row_fields or {})), **opts)

    (x,) = [h for h in csr_plan().hints if h.ref.text == "x[col[k]]"]
    assert x.pipe.var == "k" and x.csr_end is not None
    assert x.csr_end[0] == "rp" and x.csr_end[2].var == "i"
    # --fs-no-sparse-rows: the row's end is not a loop-invariant bound, so no look-ahead.
    assert "x[col[k]]" not in hinted(csr_plan(sparse_rows=False))
    # A row loop that calls something or stores integers through memory might change rp.
    assert "x[col[k]]" not in hinted(csr_plan({"int_stores": True}))
    assert "x[col[k]]" not in hinted(csr_plan({"body_calls": True}))


def test_rows_reached_through_row_pointers_are_streamed_and_read_ahead(ir):
    # A[i][j] of double **A: a stream along each row (its base loaded where the loop loads
    # it) and a second hint across i that reads the row pointers ahead.
    p = ir.plan(ir.loop("i", "n", ir.loop("j", "m", ir.row_ref("A[i][j]"))))
    assert hints(p) == [("A[i][j]", "j"), ("A[i][j]", "i")]
    stream, ahead = p.hints
    assert stream.release is stream.ref and stream.rows_for is None
    assert ahead.rows_for is stream.pipe and ahead.release is None


def test_row_pointer_the_hints_may_not_read_refuses_the_stream(ir):
    def row_hints(i_fields: dict | None = None, j_fields: dict | None = None, **ref_fields):
        return hints(ir.plan(ir.loop("i", "n", ir.loop(
            "j", "m", ir.row_ref("A[i][j]", **ref_fields), **(j_fields or {})),
            **(i_fields or {}))))

    both = [("A[i][j]", "j"), ("A[i][j]", "i")]
    assert row_hints() == both
    # The reference is not run on every iteration, or the row loop may stop early: the
    # hint's load of A[i] could be one the program never makes.
    assert row_hints(conditional=True) == []
    assert row_hints(j_fields={"body_exits": True}) == []
    # A pointer stored inside the row loop could change A[i] under the hints.
    assert row_hints(base_writes=(ir.inside(1),)) == []
    # Stored in the loop over rows only: the stream stays, the rows ahead could be unset.
    assert row_hints(base_writes=(ir.inside(0),)) == [("A[i][j]", "j")]
    # An iteration of i may skip its row: no rows ahead either.
    assert row_hints(i_fields={"body_exits": True}) == [("A[i][j]", "j")]
    # A row pointer read anew every iteration of i with no loop along the row: no stream.
    assert hints(ir.plan(ir.loop("i", "n", ir.loop("j", "m", ir.row_ref("A[i][0]"))))) == []


def test_a_nest_gets_at_most_max_hints_in_source_order(ir):
    refs = [ir.ref(f"a{k}[i]") for k in range(MAX_HINTS + 6)]
    p = ir.plan(ir.loop("i", "n", *refs))
    assert [h.ref.text for h in p.hints] == [f"a{k}[i]" for k in range(MAX_HINTS)]
    # The ones left out are reported (a decision each).
    assert {f"a{k}[i]" for k in range(MAX_HINTS, MAX_HINTS + 6)} <= named(p)


def test_every_reference_gets_a_decision(ir):
    b = ir.ref("b[i]", elem=4)
    p = ir.plan(ir.loop("i", "n", ir.loop(
        "j", "m", ir.ref("A[i][j]", dims=("m",)), ir.ref("x[i]"), ir.ref("s[0]"),
        ir.indirect("a[b[i]]", b), b, ir.ref("c[j]"), ir.ref("c[j + 1]"))))
    assert named(p) == {"A[i][j]", "x[i]", "s[0]", "a[b[i]]", "b[i]", "c[j]", "c[j + 1]"}


def test_iteration_cycles_count_the_body_and_inner_loops(ir):
    # Eq. (1)'s s: operators, 2 for the loop's test and increment, and each inner loop's
    # iterations (100 for a trip count unknown at compile time).
    inner = ir.loop("j", 10, ops=5)
    assert iteration_cycles(ir.loop("i", "n", inner, ops=3)) == 3 + 2 + 10 * (5 + 2)
    assert iteration_cycles(ir.loop("i", "n", ir.loop("j", "m", ops=5), ops=3)) == \
        3 + 2 + 100 * (5 + 2)


def test_paper_distance_is_eq_1_in_blocks(ir):
    # d = ceil(l_m / (n s + l_p)) blocks of n iterations, n the iterations one block
    # prefetch covers: 4-page blocks of 16 KiB over doubles, n = 2048.
    def d(ops: int, **opts) -> int:
        return ir.plan(ir.loop("i", "n", ir.ref("a[i]"), ops=ops), preset="paper",
                       **opts).paper_distance["i"]

    n, l_p = 2048, distance.PREFETCH_CYCLES
    assert d(0) == math.ceil(100_000 / (n * 2 + l_p)) * n             # 8 blocks
    assert d(48) == math.ceil(100_000 / (n * 50 + l_p)) * n == n      # 1 block
    assert d(0, latency_cycles=1_000_000) == math.ceil(1_000_000 / (n * 2 + l_p)) * n
    # Adaptive preset: the distance is the runtime's, none fixed at compile time.
    assert ir.plan(ir.loop("i", "n", ir.ref("a[i]"))).paper_distance == {}
    p = ir.plan(ir.loop("i", "n", ir.ref("a[i]"), ops=48), preset="paper")
    assert paper_distance(p.hints[0].pipe, p.hints, CompileOptions(preset="paper")) == (1, n)


def test_a_loop_is_split_only_where_its_strips_run_the_body_as_the_loop_would(ir):
    from foresight.compiler.schedule.plan import split_refusal
    ok = {"incr": "i++", "no_split": None}
    assert split_refusal(ir.loop("i", "n", **ok)) is None
    assert split_refusal(ir.loop("i", "n", incr="i++", no_split="a break leaves it")) == \
        "a break leaves it"
    assert "iterations left" in split_refusal(ir.loop("i", "n", bound_runtime=False, **ok))
    # The plan says which loops of a hinted nest are split, and why not.
    loop = ir.loop("i", "n", ir.ref("a[i]"), **ok)
    assert list(ir.plan(loop).splits.values()) == [None]
    paper = ir.plan(loop, preset="paper")
    assert list(paper.splits.values()) == ["the paper preset counts down"]


def test_only_innermost_pipelining_loops_are_split(ir):
    from foresight.compiler.schedule.plan import split_refusal
    ok = {"incr": "i++", "no_split": None}
    outer = ir.loop("i", "n", ir.loop("j", "m", ir.ref("a[i][j]", dims=("m",)), **ok), **ok)
    assert "loops run inside it" in split_refusal(outer)
    assert split_refusal(outer.children[0]) is None
