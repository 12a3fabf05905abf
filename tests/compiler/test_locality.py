"""analysis/locality.py on its own: reuse, the localized iteration space, locality and the
prefetch predicates of paper 1's Section 3.1 (and Appendix A's group reuse), on loop
nests built by hand (tests/compiler/conftest.py).

The paper's own examples come first, with its machine: two doubles to a page (16
bytes) and a memory of 500 pages.
"""

from __future__ import annotations

from foresight.compiler.ir import ArrayRef

PAPER = {"page_size": 16, "memory_bytes": 500 * 16}


def by_text(facts) -> dict:
    return {f.ref.text: f for f in facts.refs}


def figure_2(ir, inner_trip: int):
    """for (i = 0; i < 3; i++) for (j = 0; j < inner_trip; j++) A[i][j] = B[j][0] + B[j+1][0];"""
    return ir.loop("i", 3, ir.loop(
        "j", inner_trip,
        ir.ref("A[i][j]", dims=(inner_trip,), is_write=True),
        ir.ref("B[j][0]", dims=(2,)),
        ir.ref("B[j+1][0]", dims=(2,))))


def test_figure_4_locality_and_prefetch_predicates(ir):
    # Section 3.1.4, Figure 4(b): A[i][j] has spatial locality along j (a new page every
    # other iteration: j mod 2 = 0); B[j+1][0] temporal along i (i = 0); B[j][0] has group
    # locality with B[j+1][0], which leads, and is never prefetched (False).
    refs = by_text(ir.facts(figure_2(ir, 100), **PAPER))
    a, b0, b1 = refs["A[i][j]"], refs["B[j][0]"], refs["B[j+1][0]"]
    assert a.reuse == a.locality == {"i": "none", "j": "spatial"}
    assert a.predicate == "j mod 2 == 0"
    assert b1.reuse == b1.locality == {"i": "temporal", "j": "none"}
    assert b1.predicate == "i == first"
    assert b0.predicate == "False"
    # Section 3.1.2: the leading reference touches new data first (prefetched), the
    # trailing one last (released behind).
    assert b1.leading and not b1.trailing and b1.group == ["B[j][0]"]
    assert not b0.leading and b0.leader is b1.ref and b0.trailing
    assert a.leading and a.trailing and a.group == []


def test_figure_3_localized_iteration_space(ir):
    # Section 3.1.3, Figure 3(a): one iteration of j brings 3 pages in (one per
    # reference), one of i 13 (4 for A, 8 for B[j+1][0], 1 for B[j][0]): both loops are
    # localized in 500 pages.
    small = ir.facts(figure_2(ir, 8), **PAPER)
    assert small.volume == {"i": 13 * 16, "j": 3 * 16}
    assert small.localized == {"i": True, "j": True}
    # Figure 3(b): with 10,000 iterations of j, one iteration of i brings 15,001 pages in
    # (5,000 + 10,000 + 1): only j is localized, and B[j+1][0]'s temporal reuse along i
    # is no locality: it faults on every iteration (predicate True).
    big = ir.facts(figure_2(ir, 10_000), **PAPER)
    assert big.volume == {"i": 15_001 * 16, "j": 3 * 16}
    assert big.localized == {"i": False, "j": True}
    b1 = by_text(big)["B[j+1][0]"]
    assert b1.reuse["i"] == "temporal" and b1.locality["i"] == "none"
    assert b1.predicate == "True"
    assert by_text(big)["A[i][j]"].predicate == "j mod 2 == 0"


def test_a_reference_invariant_in_a_loop_has_temporal_reuse_there(ir):
    # x[i] inside j: the same element on every iteration of j; along i it moves 8 bytes.
    refs = by_text(ir.facts(ir.loop("i", 1000, ir.loop("j", 1000, ir.ref("x[i]")))))
    x = refs["x[i]"]
    assert x.reuse == {"i": "spatial", "j": "temporal"}
    # 512 doubles to a 4 KiB page; the conjunction is in loop order, outermost first.
    assert x.predicate == "i mod 512 == 0 && j == first"


def test_row_walk_is_spatial_along_the_inner_loop_and_column_walk_is_not(ir):
    # double M[..][1024]: a row is 8 KiB, more than a page.
    row = by_text(ir.facts(ir.loop("i", 64, ir.loop("j", 1024, ir.ref("M[i][j]", dims=(1024,))))))
    assert row["M[i][j]"].reuse == {"i": "none", "j": "spatial"}
    assert row["M[i][j]"].predicate == "j mod 512 == 0"
    col = by_text(ir.facts(ir.loop("j", 1024, ir.loop("i", 64, ir.ref("M[i][j]", dims=(1024,))))))
    assert col["M[i][j]"].reuse == {"j": "spatial", "i": "none"}


def test_reuse_is_judged_per_iteration_of_a_stepped_loop(ir):
    # j += 1024 over doubles moves 8 KiB an iteration: no spatial reuse; j += 2 moves 16
    # bytes: spatial, a new page when j crosses a multiple of 512.
    far = by_text(ir.facts(ir.loop("j", 1 << 20, ir.ref("a[j]"), step=1024)))
    assert far["a[j]"].reuse == {"j": "none"} and far["a[j]"].predicate == "True"
    near = by_text(ir.facts(ir.loop("j", 1 << 20, ir.ref("a[j]"), step=2)))
    assert near["a[j]"].reuse == {"j": "spatial"}
    assert near["a[j]"].predicate == "j mod 512 == 0"


def test_a_stride_known_only_at_run_time_is_decided_at_run_time(ir):
    # A[i][j] of double A[..][m], i inner: the row's size m is a run-time value, so
    # whether i stays on a page is unknown ("?"): the predicate tests it at run time.
    a = by_text(ir.facts(ir.loop("j", "m", ir.loop("i", "n", ir.ref("A[i][j]", dims=("m",))))))
    a = a["A[i][j]"]
    assert a.reuse == {"j": "spatial", "i": "?"}
    assert a.locality["i"] == "?"
    assert "run time" in a.predicate and a.predicate != "True"


def test_loops_of_unknown_volume_are_outside_the_localized_space(ir):
    # w[j] is reused on every iteration of i, but one iteration of i touches m elements,
    # m unknown: i is not localized and the reuse is no locality.
    f = ir.facts(ir.loop("i", "n", ir.loop("j", "m", ir.ref("w[j]"), ir.ref("a[n*i + j]"))))
    assert f.volume == {"i": None, "j": 2 * 4096}
    assert f.localized == {"i": False, "j": True}
    w = by_text(f)["w[j]"]
    assert w.reuse["i"] == "temporal" and w.locality["i"] == "none"
    assert w.predicate == "j mod 512 == 0"


def test_the_localized_space_depends_on_the_memory_assumed(ir):
    root = ir.loop("i", 100, ir.loop("j", 1 << 16, ir.ref("w[j]")))
    # One iteration of i touches all of w: 512 KiB.
    assert ir.facts(root).volume["i"] == 512 << 10
    assert ir.facts(root, memory_bytes=1 << 20).localized["i"]
    assert not ir.facts(root, memory_bytes=256 << 10).localized["i"]
    assert by_text(ir.facts(root, memory_bytes=256 << 10))["w[j]"].locality["i"] == "none"


def test_group_reuse_leader_is_the_reference_that_runs_ahead(ir):
    # a[i] and a[i + 1] (temporal group reuse, Eq. (2)): a[i + 1] touches every element
    # first; a countdown loop reverses that.
    up = by_text(ir.facts(ir.loop("i", 1 << 20, ir.ref("a[i]"), ir.ref("a[i + 1]"))))
    assert up["a[i + 1]"].leading and up["a[i]"].leader is up["a[i + 1]"].ref
    assert up["a[i]"].trailing and not up["a[i + 1]"].trailing
    down = by_text(ir.facts(ir.loop("i", 0, ir.ref("a[i]"), ir.ref("a[i + 1]"),
                                    lower=1 << 20, step=-1, cond=">")))
    assert down["a[i]"].leading and down["a[i + 1]"].leader is down["a[i]"].ref
    # The same reference twice: the first one leads.
    twice = ir.facts(ir.loop("i", 1 << 20, ir.ref("a[i]"), ir.ref("a[i]")))
    assert [f.leading for f in twice.refs] == [True, False]


def test_spatial_group_reuse_within_half_a_page(ir):
    # u[k][0] and u[k][1]: no loop moves the last subscript, both touch the same half page
    # every iteration, the higher address leads; 300 doubles apart (2,400 bytes) is more
    # than half a page: no group.
    near = by_text(ir.facts(ir.loop("k", 1 << 16, ir.ref("u[k][0]", dims=(512,)),
                                    ir.ref("u[k][1]", dims=(512,)))))
    assert near["u[k][1]"].leading and not near["u[k][0]"].leading
    far = ir.facts(ir.loop("k", 1 << 16, ir.ref("u[k][0]", dims=(512,)),
                           ir.ref("u[k][300]", dims=(512,))))
    assert all(f.leading and f.group == [] for f in far.refs)


def test_a_reference_in_an_offset_loop_joins_the_group_without_leading_it(ir):
    # u[k + 1][j] leads u[k][j] and u[k - 1][j]; u[k + o][j] in `for (o = lo; o <= hi; o++)`
    # (o's coefficient that of k) and u[k][j + o] (that of j) are a stencil's offsets:
    # in the group, never leading nor trailing, wherever they come in the source.
    u = {"dims": (4096,)}
    root = ir.loop("k", 4096, ir.loop(
        "j", 4096,
        ir.loop("o", "hi", ir.ref("u[k + o][j]", **u), lower="lo", cond="<="),
        ir.ref("u[k][j]", **u), ir.ref("u[k + 1][j]", **u), ir.ref("u[k - 1][j]", **u),
        ir.loop("p", "hi", ir.ref("u[k][j + p]", **u), lower="lo", cond="<=")))
    refs = by_text(ir.facts(root))
    lead = refs["u[k + 1][j]"]
    assert lead.leading and refs["u[k - 1][j]"].trailing
    for text in ("u[k + o][j]", "u[k][j + p]"):
        assert refs[text].leader is lead.ref and not refs[text].trailing
        assert refs[text].predicate == "False"
    # Not an offset: o moving u by other than a loop of the group's (u[2 * k + o][j],
    # u[o][j]), or a reference alone in its array (v[k + o][j]): no group.
    for text in ("u[2 * k + o][j]", "u[o][j]", "v[k + o][j]"):
        alone = by_text(ir.facts(ir.loop("k", 4096, ir.loop(
            "j", 4096, ir.ref("u[k][j]", **u),
            ir.loop("o", "hi", ir.ref(text, **u), lower="lo", cond="<=")))))
        assert alone[text].leading and alone[text].group == []
    # Not an offset loop: one sweeping the rest of the array (`o < n - i`, its bound moves
    # with i) or one whose trip count moves the reference by a block (8,192 doubles).
    for inner in (ir.loop("o", "n", ir.ref("x[i + o]"), upper_aff=ir.aff("n - i")),
                  ir.loop("o", 8192, ir.ref("x[i + o]"))):
        swept = by_text(ir.facts(ir.loop("i", 1 << 20, ir.ref("x[i]"), inner)))
        assert swept["x[i + o]"].leading and swept["x[i + o]"].group == []


def test_a_loop_sweeping_the_record_another_indexes_joins_its_group(ir):
    # NAS SP's right-hand side: u[k][j][i][n] in `for (n = 0; n < 5; n++)` inside the loop
    # over m of u[k][j][i][m] sweeps the same 40-byte record: n stands in for m.  In the
    # group led by u[k + 1][j][i][m] and trailed by u[k - 1][j][i][m]; released behind
    # itself, it had released plane k while u[k - 1] still read it at k + 1.
    u = {"dims": (64, 64, 5)}
    root = ir.loop("k", 64, ir.loop("j", 64, ir.loop("i", 64, ir.loop(
        "m", 5, ir.ref("u[k][j][i][m]", **u), ir.ref("u[k + 1][j][i][m]", **u),
        ir.ref("u[k - 1][j][i][m]", **u),
        ir.loop("n", 5, ir.ref("u[k][j][i][n]", **u))))))
    refs = by_text(ir.facts(root))
    lead = refs["u[k + 1][j][i][m]"]
    assert lead.leading and refs["u[k - 1][j][i][m]"].trailing
    n = refs["u[k][j][i][n]"]
    assert n.leader is lead.ref and not n.trailing and n.predicate == "False"
    # Not standing in: a loop sweeping the array beside one indexing it (IS's key[i]
    # beside key[it]), or a record loop beside a loop sweeping the array (x[e], e < 5,
    # beside x[i]): the offset between them is not bounded by a record.
    for root in (ir.loop("it", 8, ir.ref("key[it]"), ir.loop("i", "n", ir.ref("key[i]"))),
                 ir.loop("i", 1 << 20, ir.ref("x[i]"), ir.loop("e", 5, ir.ref("x[e]")))):
        alone = ir.facts(root)
        assert all(f.leading and f.group == [] for f in alone.refs)


def test_only_uniformly_generated_references_of_one_array_form_groups(ir):
    f = ir.facts(ir.loop("i", 512, ir.loop(
        "j", 512, ir.ref("A[i][j]", dims=(512,)), ir.ref("A[j][i]", dims=(512,)),
        ir.ref("B[i][j]", dims=(512,)))))
    assert all(r.leading and r.group == [] for r in f.refs)


def test_a_group_member_that_does_not_lead_adds_one_page_to_the_volume(ir):
    # Section 3.1.3: B[j][0] contributes a single page; a[i] likewise next to a[i + 1].
    f = ir.facts(ir.loop("i", 4096, ir.ref("a[i]"), ir.ref("a[i + 1]")))
    assert f.volume == {"i": 2 * 4096}


def test_indirect_references_have_no_locality(ir):
    # Section 3.2.2.3: a[b[i]] is assumed to fault on every iteration (predicate True);
    # its index b[i] is an ordinary reference.  Indirect targets are not counted in the
    # volumes (their footprint is unknown).
    b = ir.ref("b[i]", elem=4)
    f = ir.facts(ir.loop("n", 8, ir.loop("i", 1024, ir.indirect("a[b[i]]", b), b)))
    refs = by_text(f)
    assert refs["a[b[i]]"].reuse == refs["a[b[i]]"].locality == {"n": "none", "i": "none"}
    assert refs["a[b[i]]"].predicate == "True" and refs["a[b[i]]"].leading
    assert refs["b[i]"].reuse == {"n": "temporal", "i": "spatial"}
    assert refs["b[i]"].predicate == "n == first && i mod 1024 == 0"
    assert f.volume == {"n": 4096, "i": 4096}


def test_a_row_read_through_a_row_pointer_is_new_on_every_row(ir):
    # A[i][j] of double **A: the row pointer A[i] is loaded anew for every i, so nothing
    # is known about the rows' places: no reuse along i, and each row its own pages.
    f = ir.facts(ir.loop("i", 16, ir.loop("j", 1024, ir.row_ref("A[i][j]"))))
    a = by_text(f)["A[i][j]"]
    assert a.reuse == {"i": "none", "j": "spatial"}
    assert f.volume == {"i": 2 * 4096, "j": 4096}


def test_a_sparse_row_is_not_reused_across_rows(ir):
    # for (k = rp[i]; k < rp[i + 1]; k++) ... col[k]: the offset does not move with i, but
    # each row reads its own stretch of col.
    row = ir.loop("k", "e", ir.ref("col[k]", elem=4), csr=("rp", "i", ir.aff("i + 1")))
    col = by_text(ir.facts(ir.loop("i", "n", row)))["col[k]"]
    assert col.reuse == {"i": "none", "k": "spatial"}
    plain = by_text(ir.facts(ir.loop("i", "n", ir.loop("k", "e", ir.ref("col[k]", elem=4)))))
    assert plain["col[k]"].reuse["i"] == "temporal"


def test_a_pointer_walk_has_no_reuse_across_the_loops_around_it(ir):
    # for (p = *rp; p < e; p += 8) ... *p inside a loop over i: each run may start
    # anywhere, so no reuse along i is known (the variable p is the address itself).
    deref = ArrayRef(text="*p", line=1, base="0", subscripts=(ir.aff("p"), ir.aff("0")),
                     strides=({(): 1}, {(): 8}), elem_size=8, is_write=False,
                     conditional=False)
    walk = ir.loop("p", "e", deref, lower="s", step=8, walk=True)
    p = by_text(ir.facts(ir.loop("i", "n", walk)))["*p"]
    assert p.reuse == {"i": "none", "p": "spatial"}
    # A byte per unit of p: a new page when p crosses a multiple of 4096.
    assert p.predicate == "p mod 4096 == 0"


def test_solve_finds_the_first_small_integer_solution():
    from foresight.compiler.analysis.locality import _solve

    one = {(): 1}
    n = {("n",): 1}
    # rows·r = delta over symbols: r0·n + r1·1 = n + 2 -> r = [1, 2]
    assert _solve([[n, one]], [{("n",): 1, (): 2}]) == [1, 2]
    # no solution within |r| <= 4
    assert _solve([[n, {}]], [{("n",): 5}]) is None
    # a column no row uses stays 0; the first solution in search order wins
    assert _solve([[one, one, {}]], [{}]) == [-4, 4, 0]
    assert _solve([[one]], [{}]) == [0]


def test_the_group_solver_finds_the_first_solution_in_search_order():
    """_first_solution prunes the search over |x_k| <= 4 and must still give the first
    solution of the full enumeration (which the group's leader depends on), or none."""
    import itertools
    import random

    from foresight.compiler.analysis.locality import _first_solution

    rng = random.Random(7)
    found = 0
    for _ in range(400):
        n = rng.randint(1, 4)
        eqs = []
        for _ in range(rng.randint(1, 3)):
            cs = tuple(rng.choice((0, 0, 1, -1, 2, 3, 8, 64)) for _ in range(n))
            eqs.append((cs, rng.randint(-20, 20)))
        want = next((list(x) for x in itertools.product(range(-4, 5), repeat=n)
                     if all(sum(c * v for c, v in zip(cs, x, strict=True)) == t
                            for cs, t in eqs)), None)
        assert _first_solution(eqs, n) == want, eqs
        found += want is not None
    assert found > 50      # the systems drawn include many with solutions
