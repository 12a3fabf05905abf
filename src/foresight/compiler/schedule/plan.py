"""Decide where each prefetch and release goes (paper Section 3.2).

The runtime steps a pipelining loop's streams where the address `distance` iterations
ahead enters a new granule (a block, a page for strides of a page or more): once per
strip of the loop where it can be split with one copy of the body (split_refusal,
rewrite/emit_stream.strip), else at the end of a countdown in the body.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from foresight.compiler.analysis.locality import NestFacts, RefFacts
from foresight.compiler.ir import Affine, ArrayRef, Loop, Sym, sym_str, sym_value
from foresight.compiler.options import CompileOptions
from foresight.compiler.schedule import distance, release


@dataclass
class Move:
    """An outward move of the pipelining loop decided at nest entry (Section 3.2.2.2 with
    a trip count or stride known only at run time): taken when all iterations of `loop`
    move the address by less than a block, |coeff · step| · trip < block."""

    coeff: Sym
    loop: Loop


@dataclass
class Version:
    """Which of a reference's candidate pipelining loops a hint belongs to: the moves are
    evaluated at nest entry, innermost first, and the hint runs when exactly `taken` of
    them hold in a row (0: the innermost candidate)."""

    moves: tuple[Move, ...]
    taken: int


@dataclass
class Hint:
    """One prefetch stream: a leading reference pipelined across `pipe`."""

    ref: ArrayRef
    pipe: Loop
    inner_at_lower: list[Loop]       # loops inside `pipe` whose variables take their lower bound
    release: ArrayRef | None         # trailing reference released behind, or None
    # The index b[i] of a prefetched a[b[i]]: it runs ahead of the look-ahead loads that
    # read it (rewrite/emit_indirect.py), so they find it in memory.
    feeds_indirect: bool = False
    indirect_index: ArrayRef | None = None   # for a[b[i]] and a[c[b[i]]]: b[i]
    indirect_middle: ArrayRef | None = None  # for a[c[b[i]]]: c[b[i]] (a small table)
    # Release only when one iteration of this loop touches more than memory: the volume,
    # as (element bytes, [(byte coefficient, inner loop)]) per reference, is evaluated at
    # nest entry (run-time versioning of the paper's release decision); with no volume,
    # measured by the stream as it runs (FORESIGHT_STREAM_SWEEP).
    release_if_exceeds: Loop | None = None
    volume: list[tuple[int, list[tuple[dict | None, Loop]]]] | None = None
    # Rows ahead: `pipe` is the loop over rows A[i], and this the loop along a row; the
    # hint loads the row pointer d rows ahead and prefetches that row's start.
    rows_for: Loop | None = None
    # For a[b[k]] along a row of a compressed sparse row matrix (Loop.csr), unless
    # --fs-no-sparse-rows: the end of the last row, R[last i + c + 1], which bounds the
    # look-ahead instead of the row's own end, as (R, the upper index, the row loop, whose
    # last i the rewrite computes from its bound); see _csr_end.
    csr_end: tuple[str, Affine, Loop] | None = None
    # Set when the pipelining loop is chosen at nest entry: one hint per candidate loop.
    version: Version | None = None


@dataclass
class NestPlan:
    facts: NestFacts
    hints: list[Hint] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    paper_distance: dict[str, int] = field(default_factory=dict)  # pipe var -> d (paper preset)
    # The bytes one run of the whole nest spans, as _small_runs' terms, when only its
    # entry can tell whether that is less than a block: such a run goes unhinted.
    footprint: tuple[int, list[tuple[Loop, list[Sym]]]] | None = None
    # Per pipelining loop with streams (by id): None where they step once per strip of
    # it (loop splitting, rewrite/emit_stream.strip), else why they count down in every
    # iteration instead.
    splits: dict[int, str | None] = field(default_factory=dict)
    # Per pipelining loop (by id) whose streams step only on every g-th run of it: the
    # loop directly around it, along which the references move by under half a page an
    # iteration, and g (_gates).
    gates: dict[int, tuple[Loop, int]] = field(default_factory=dict)

    def pipes(self) -> list[Loop]:
        out: list[Loop] = []
        for h in self.hints:
            if h.pipe not in out:
                out.append(h.pipe)
        return out


def _intervals(loops: list[Loop]) -> dict[str, tuple[int, int]]:
    """[min, max] of each loop variable whose bounds are affine with constant
    coefficients in the variables of enclosing loops that have intervals themselves
    (triangular loops of small fixed extent: `for (r = p + 1; r < 5; r++)`)."""
    out: dict[str, tuple[int, int]] = {}

    def extent(aff) -> tuple[int, int] | None:
        if aff is None:
            return None
        base = sym_value(aff.const)
        if base is None:
            return None
        lo = hi = base
        for var, coeff in aff.coeffs.items():
            c = sym_value(coeff)
            if c is None or var not in out:
                return None
            a, b = out[var]
            lo += min(c * a, c * b)
            hi += max(c * a, c * b)
        return lo, hi

    for lp in loops:
        low, up = extent(lp.lower_aff), extent(lp.upper_aff)
        if low is None or up is None or lp.step is None:
            continue
        if lp.step > 0 and lp.cond_op in ("<", "<="):
            out[lp.var] = (low[0], up[1] - (lp.cond_op == "<"))
        elif lp.step < 0 and lp.cond_op in (">", ">="):
            out[lp.var] = (up[0] + (lp.cond_op == ">"), low[1])
    return out


def _span(f: RefFacts, varying: list[Loop]) -> int | None:
    """Bytes between the reference's first and last address over the whole nest, when
    every loop moving it has bounds of known extent and the strides are constants."""
    off = f.ref.byte_offset()
    span = f.ref.elem_size
    iv = _intervals(f.loops)
    if any(lp.var in f.ref.base_loops for lp in varying):
        return None   # several objects
    for lp in varying:
        c = sym_value(off.coeff(lp.var))
        if c is None or lp.var not in iv:
            return None
        lo, hi = iv[lp.var]
        span += abs(c) * max(hi - lo, 0)
    return span


def _pipe_loop(f: RefFacts, opts: CompileOptions
               ) -> tuple[list[tuple[Loop, list[Loop], str]], tuple[Move, ...], str]:
    """Section 3.2.2.2: the innermost loop changing the address, moved outward while the
    candidate touches less than a block over all its iterations.

    Returns the candidate pipelining loops, each with the loops moved inside it (their
    variables at their lower bounds) and why, and the moves between consecutive ones
    that only the nest's entry can decide (a trip count or stride known at run time);
    no candidate, and why, when the reference is not pipelined."""
    off = f.ref.byte_offset()
    rows = f.ref.base_loops
    varying = [lp for lp in f.loops if off.coeff(lp.var) or lp.var in rows]
    if not varying:
        return [], (), "address is loop-invariant: one page, not pipelined"
    if varying[-1].var in rows:
        return [], (), (f"its base {f.ref.base} is read anew every iteration of "
                        f"{varying[-1].var}: not pipelined (left to demand paging)")
    if f.ref.object_bytes is not None and f.ref.object_bytes < opts.block_size:
        return [], (), (f"its object is {f.ref.object_bytes} bytes, less than a "
                        f"{opts.block_size}-byte block: not pipelined (left to demand paging)")
    span = _span(f, varying)
    if span is not None and span < opts.run_floor:
        return [], (), (f"the whole nest touches {span} bytes of it, less than "
                        f"{opts.run_floor} bytes: not pipelined (left to demand paging)")
    pipe = varying[-1]
    moved: list[Loop] = []
    why = f"pipelining loop {pipe.var} (the innermost loop changing the address)"
    found: list[tuple[Loop, list[Loop], str]] = []
    moves: list[Move] = []
    while True:
        c = sym_value(off.coeff(pipe.var))
        idx = varying.index(pipe)
        if idx == 0 or varying[idx - 1].var in rows:
            break
        if c is not None and pipe.trip is not None:   # constant bounds and stride
            if abs(c) * pipe.trip >= opts.block_size:
                break
            how = f": {pipe.var} touches {abs(c) * pipe.trip} bytes in all, less than"
        elif _evaluable(pipe) and not f.ref.base_loaded:
            # The trip count or the stride is known only at run time: both candidates
            # get hints, and the nest's entry takes one (run-time versioning).
            found.append((pipe, moved, why))
            moves.append(Move(off.coeff(pipe.var), pipe))
            how = (f" when {pipe.var} touches less in all ({sym_str(off.coeff(pipe.var))} "
                   "bytes times its trip count, tested at nest entry) than")
        else:
            break
        # Loops between the candidate and the next varying one leave the address alone.
        between = f.loops[f.loops.index(varying[idx - 1]) + 1:f.loops.index(pipe) + 1]
        moved = [lp for lp in between if off.coeff(lp.var)] + moved
        pipe = varying[idx - 1]
        why = f"pipelining loop {pipe.var}{how} a {opts.block_size}-byte block (Section 3.2.2.2)"
    found.append((pipe, moved, why))
    return found, tuple(moves), ""


def _evaluable(lp: Loop) -> bool:
    """Whether the nest's entry can count the loop's iterations: bounds on invariant
    variables only, and a constant step towards the bound."""
    return (lp.lower_sym is not None and lp.upper_sym is not None and bool(lp.step)
            and lp.cond_op in ("<", "<=", ">", ">=")
            and (lp.step > 0) == (lp.cond_op in ("<", "<=")))


# The most hints one loop nest gets (schedule).
MAX_HINTS = 64


def schedule(facts: NestFacts, opts: CompileOptions) -> NestPlan:
    plan = NestPlan(facts)
    seen_indirect: set[str] = set()
    for f in facts.refs:
        r = f.ref
        if r.indirect is not None:
            if r.text in seen_indirect:
                continue  # the same indirect reference again (a[b[i]] = a[b[i]] + ...)
            seen_indirect.add(r.text)
            if not opts.indirect:
                plan.decisions.append(f"{r.text}: indirect not prefetched: --no-indirect")
                continue
            memory = opts.memory_bytes
            if (opts.preset != "paper" and r.object_bytes is not None
                    and r.object_bytes * 8 <= memory):
                # The paper prefetches every indirect reference (Section 3.2.2.3) and pays
                # for it where the target is small (Figure 18, ranking); an object much
                # smaller than memory stays resident once touched (Section 3.1's rule).
                plan.decisions.append(f"{r.text}: indirect not prefetched: its object "
                                      f"({r.object_bytes} bytes) stays in memory")
                continue
            stream, middle = r.indirect, None
            if stream.indirect is not None:
                middle, stream = stream, stream.indirect
            moving = [lp for lp in f.loops if stream.byte_offset().coeff(lp.var)]
            lp = moving[-1] if moving else f.loops[-1]
            csr_end, why = _csr_end(f, lp) if opts.sparse_rows else (None, None)
            why = why or _indirect_unsafe(f, stream, lp, csr_end is not None)
            if why and lp.csr is not None and not opts.sparse_rows:
                why += " (--fs-no-sparse-rows: no look-ahead across the rows of a sparse matrix)"
            if not why and middle is not None and (middle.object_bytes is None
                                                   or middle.object_bytes * 8 > memory):
                # The look-ahead reads c[b[i + d]]: only a table of known size can be
                # bounds-checked, and only a small one is resident (no fault moved ahead).
                why = (f"its index {middle.text} is not a table known to stay in memory "
                       "(the look-ahead load through it cannot be bounded)")
            if why:
                plan.decisions.append(f"{r.text}: indirect not prefetched: {why}")
                continue
            plan.hints.append(Hint(r, lp, [], None, indirect_index=stream,
                                   indirect_middle=middle, csr_end=csr_end))
            through = f" through {middle.text} (bounds-checked)" if middle is not None else ""
            if csr_end is not None:
                through += (f"; looking ahead across rows up to {lp.upper} at the last "
                            f"{csr_end[2].var}")
            ahead = ("twice as far ahead" if opts.preset == "paper"
                     else "ahead of the look-ahead loads by a stream's distance")
            plan.decisions.append(f"{r.text}: indirect, predicate True, pipelined across "
                                  f"{lp.var}; {stream.text} prefetched {ahead}{through}")
            continue
        if not f.leading:
            plan.decisions.append(f"{r.text}: group reuse with {f.leader.text} (leading): "
                                  "not prefetched")
            continue
        found, moves, why = _pipe_loop(f, opts)
        if not found:
            plan.decisions.append(f"{r.text}: {why}")
            continue
        # A base read from memory has one candidate (_pipe_loop versions no move for it).
        unsafe = _loaded_base_unsafe(f, found[0][0], facts.refs) if r.base_loaded else None
        if unsafe:
            plan.decisions.append(f"{r.text}: not prefetched: {unsafe}")
            continue
        if not release.temporal_outside_only(f, found[0][0]):
            plan.decisions.append(f"{r.text}: reused within the localized space across "
                                  "enclosing loops: prefetched on first touch only "
                                  "(the run-time filter drops repeats)")
        trailing = release.trailing(f, facts.refs)
        chosen = []
        for taken, (pipe, moved, why) in enumerate(found):
            keep, across = release.kept(f, pipe, facts, opts.memory_bytes,
                                        opts.preset == "paper")
            volume = release.runtime_volume(facts, across) if across is not None else None
            # Kept while one iteration of `across` fits, but its volume cannot be
            # evaluated at entry: the stream measures its sweeps as it runs.
            measured = keep is not None and across is not None and volume is None
            behind = trailing if keep is None or across is not None else None
            plan.hints.append(Hint(r, pipe, moved, behind,
                                   release_if_exceeds=across if volume is not None or measured
                                   else None,
                                   volume=volume,
                                   version=Version(moves, taken) if moves else None))
            rel = (f"released behind {trailing.text} when one iteration of {across.var} "
                   "touches more than memory (both evaluated at nest entry)"
                   if volume is not None else
                   f"released behind {trailing.text} once one sweep of it passes more than "
                   f"memory (measured as it runs: one iteration of {across.var} touches at "
                   "least that; its volume cannot be evaluated at nest entry)"
                   if measured else f"released behind {trailing.text}"
                   if keep is None else f"not released ({keep})")
            if r.base_loops:
                row_loop, no_rows = _rows_ahead(f, pipe)
                if row_loop is not None:
                    plan.hints.append(Hint(r, row_loop, [], None, rows_for=pipe))
                    rel += (f"; the rows ahead across {row_loop.var} prefetched from their "
                            "row pointers (read no further than the loop's last iteration)")
                else:
                    rel += f"; no look-ahead across rows ({no_rows})"
            chosen.append(f"{why}; {rel}")
        plan.decisions.append(f"{r.text}: predicate {f.predicate}; " + "; or ".join(chosen))
    # What one nest may add is bounded, so the generated code stays proportionate to the
    # source: hints past MAX_HINTS, in source order, are left out and reported (the NAS
    # kernels have at most 25 in a nest, counting both versions of a reference).
    for h in plan.hints[MAX_HINTS:]:
        plan.decisions.append(f"{h.ref.text}: not hinted: the nest already has {MAX_HINTS} "
                              "hints, the most one nest gets")
    del plan.hints[MAX_HINTS:]
    # The index stream of a prefetched a[b[i]] runs ahead of the look-ahead loads of b
    # (twice as far ahead in the paper, Section 3.2.2.3); an index whose indirect
    # reference is not prefetched is an ordinary stream.  When b[i] is read twice, the
    # group's leading reference carries the stream.
    leader = {id(f.ref): f.leader or f.ref for f in facts.refs}
    indexes = {id(leader.get(id(h.indirect_index), h.indirect_index))
               for h in plan.hints if h.indirect_index is not None}
    for h in plan.hints:
        if id(h.ref) in indexes:
            h.feeds_indirect = True
    _small_runs(plan, opts)
    _gates(plan, opts)
    for h in plan.hints:
        if h.indirect_index is None and h.rows_for is None:
            plan.splits[id(h.pipe)] = (
                "the paper preset counts down" if opts.preset == "paper" else
                "the nest runs in one version" if facts.nest.uncopyable is not None
                else split_refusal(h.pipe))
    if opts.preset == "paper":
        for lp in plan.pipes():
            mine = [h for h in plan.hints if h.pipe is lp]
            blocks, iters = distance.paper_distance(lp, mine, opts)
            plan.paper_distance[lp.var] = iters
            plan.decisions.append(f"Eq. (1) distance across {lp.var}: {blocks} block(s), "
                                  f"{iters} iterations")
    return plan


def _gate(f: RefFacts, h: Hint, page: int) -> tuple[Loop, int | None] | None:
    """The loop L directly around h's pipelining loop and g = the iterations of L that
    move h's reference by at most half a page in all (None: L does not move it), when
    its streams need to step on one run of the pipelining loop in g only (Section
    3.1.4's prefetch predicates on an enclosing loop: `i mod g == 0` for spatial reuse,
    `i == first` for temporal); None when they must step on every run.

    That holds for a stream with no look-ahead loads (an index of a[b[i]], rows through
    row pointers) whose reference L moves by a constant 0 < |stride| <= half a page per
    iteration, while one iteration of L touches less than memory (its pages stay in
    memory while L runs on): the runs of the next g - 1 iterations of L touch the same
    pages or the next one.  The step is due where L's variable has moved g iterations
    or more from the last step's (not after g runs: L may skip the pipelining loop on
    some iterations), and the pipelining loop must run to its bound (no early exit:
    a step asks for the run's whole window).
    Where that is known at compile time (L in the localized space), the stream has no
    release; where only the nest's entry can tell (a release behind it when one
    iteration of L touches more than memory, h.volume), the stream steps on every run
    when it releases (emit_stream.gate_open).  A gated step prefetches, per iteration of
    its loop, the bytes of 2g iterations of L (emit_stream's region): this group's
    (found resident, cheaply, after its first run) and the next group's, one group
    ahead.  NAS SP's z_solve, `rhs[k][j][i][m]` along k (a plane per iteration) inside i
    (40 bytes an iteration), stepped 4.7 million times at 192 MiB, nearly all of them
    finding their pages already asked for, and late for the rest: a run of k is a few
    microseconds, a page from swap takes longer."""
    idx = f.loops.index(h.pipe)
    if (h.indirect_index is not None or h.rows_for is not None or h.feeds_indirect
            or idx == 0 or h.pipe.body_exits):
        # A run that may end early (a break, goto or return: body_exits also counts a
        # continue) would step for the runs that go further.
        return None
    lp = f.loops[idx - 1]
    if h.release is None:
        if f.locality.get(lp.var) not in ("spatial", "temporal"):
            return None
    elif h.release_if_exceeds is not lp or h.volume is None:
        return None
    c = sym_value(h.ref.byte_offset().coeff(lp.var))
    if lp.step is None or c is None or lp.var in h.ref.base_loops:
        return None
    moved = abs(c * lp.step)
    if moved == 0:   # the same addresses on every run: the first run of each of L's
        return lp, None
    if moved > page // 2 or not _evaluable(lp):
        return None   # (the region is cut to L's iterations, counted at nest entry)
    return lp, page // moved


# _gates' g for streams the loop around does not move: its first run of each.
UNMOVED = 1 << 30


def _gates(plan: NestPlan, opts: CompileOptions) -> None:
    """NestPlan.gates: a pipelining loop's streams step on one run in g when every one of
    them may (_gate) with the same loop around (g: the smallest of theirs)."""
    if opts.preset == "paper":
        return
    facts = {id(f.ref): f for f in plan.facts.refs}
    for pipe in plan.pipes():
        streams = [h for h in plan.hints
                   if h.pipe is pipe and h.indirect_index is None and h.rows_for is None]
        if not streams or len(streams) != sum(h.pipe is pipe for h in plan.hints):
            continue
        gates = [_gate(facts[id(h.ref)], h, opts.page_size) for h in streams]
        if any(g is None for g in gates) or len({id(g[0]) for g in gates}) != 1:
            continue
        lp = gates[0][0]
        bounded = [n for _, n in gates if n is not None]
        g = min(bounded, default=UNMOVED)
        plan.gates[id(pipe)] = (lp, g)
        fits = f"while one iteration of {lp.var} fits in memory"
        plan.decisions.append(
            f"streams across {pipe.var} step on the first run of it in each run of "
            f"{lp.var} ({lp.var} does not move them; {fits})" if not bounded else
            f"streams across {pipe.var} step on its runs {g} or more iterations of "
            f"{lp.var} apart ({lp.var} moves them by at most half a page per {g}; {fits}), "
            f"each step prefetching what {2 * g} iterations of {lp.var} touch from the "
            "current one")


def split_refusal(pipe: Loop) -> str | None:
    """Why the streams of pipelining loop `pipe` cannot step once per strip of it
    (rewrite/emit_stream.strip, the paper's loop splitting), or None when they can: the
    strips run the body as often as the loop would only where the front end finds
    nothing against it (Loop.no_split: a `break` leaving the loop, an index something
    else may change or that may wrap...) and the iterations left are known at every
    step (bounds evaluable again in its body, and invariant in the loop or a bound its
    body cannot change: Loop.bound_kept).  Only innermost loops are split: there the
    step's call costs the loop its registers."""
    if pipe.no_split is not None:
        return pipe.no_split
    if pipe.children:
        # Its countdown runs once per run of the loops inside: splitting it would cost
        # code, not time (NAS SP's compute_rhs, split at k, j and i, ran its unhinted copy
        # 1.3 times slower in memory, the function grown past gcc's budgets).
        return "loops run inside it (its countdown is not in an innermost loop)"
    if not ((pipe.bounds_invariant or pipe.bound_kept) and pipe.bound_runtime
            and pipe.upper is not None and pipe.step):
        return "its iterations left are not known at every step"
    return None


def _small_runs(plan: NestPlan, opts: CompileOptions) -> None:
    """A run of the nest spanning less than a block in all goes unhinted, tested at nest
    entry: _pipe_loop's compile-time rule (a reference spanning less than a block is left
    to demand paging) for trip counts known only at run time.  Such a nest is typically
    a short loop in a function called very often (a key comparison over `keylen`
    elements), where the hints' set-up costs more than the run itself; the test costs a
    few loads and multiplications per entry instead.

    The span errs large: per reference its element plus, per loop moving it, the
    iterations after the first times its stride; a loop reading a new row pointer per
    iteration counts a block per iteration, one moving an indirect reference's index a
    page.  Kept as (bytes, [(loop, [byte strides per iteration])]) for the rewrite; none
    when a loop's bounds cannot be evaluated at entry, the span is known to be a block or
    more, or under the paper preset (which hints every run)."""
    if not plan.hints or opts.preset == "paper":
        return
    fixed = 0
    per_loop: dict[int, tuple[Loop, list[Sym]]] = {}
    for f in plan.facts.refs:
        if f.ref.indirect is None and not f.leading:
            continue   # its group's leader spans the same data
        index = f.ref
        while index.indirect is not None:
            index = index.indirect
        fixed += f.ref.elem_size
        off = index.byte_offset()
        for v in f.loops:
            c = off.coeff(v.var)
            if v.var in index.base_loops:
                stride: Sym = {(): opts.block_size}
            elif index is not f.ref and c:
                stride = {(): opts.page_size}
            elif not c:
                continue
            else:
                stride = c
            if not _evaluable(v):
                return
            per_loop.setdefault(id(v), (v, []))[1].append(stride)
    terms = list(per_loop.values())
    if all(v.trip is not None and all(sym_value(s) is not None for s in st) for v, st in terms):
        span = fixed + sum(max(v.trip - 1, 0) * sum(abs(sym_value(s) * v.step) for s in st)
                           for v, st in terms)
        if span >= opts.block_size:
            return
    plan.footprint = (fixed, terms)


def _csr_end(f: RefFacts, lp: Loop) -> tuple[tuple[str, Affine, Loop] | None, str | None]:
    """For a loop over one row of a compressed sparse row matrix (Loop.csr), the last
    row's end R[last i + c + 1] as (R, the upper index, the row loop) and None; else None
    and why not.

    The rows' ranges chain: for k in the current row (R[i] <= k) and any k' with
    k <= k' < R[last + 1], the sequence R[i], R[i+1], ..., R[last + 1] starts at or
    below k' and ends above it, so some row j >= i has R[j] <= k' < R[j+1], and the
    program reads index k' itself when it runs that row, monotone R or not.  That holds
    when every row runs in full: the row loop steps +1 to a bound the body can evaluate
    again, and it and the loop along the row have no early exit, the latter not
    conditional; and when R cannot change while the row loop runs: it makes no call and
    stores only floating-point values through memory."""
    if lp.csr is None:
        return None, None
    rows, var, upper = lp.csr
    at = f.loops.index(lp)
    row = f.loops[at - 1] if at > 0 else None
    if row is None or row.var != var:
        return None, f"the row loop {var} does not directly enclose {lp.var}"
    if row.step != 1 or row.cond_op not in ("<", "<=") or not row.bound_runtime:
        return None, f"the row loop {var} does not step +1 to a bound evaluable again"
    if row.body_exits or lp.body_exits or lp.conditional:
        return None, "a row may not run in full (early exit or conditional loop)"
    if row.body_calls or row.int_stores:
        return None, (f"the row loop {var} may change {rows} (it makes calls or stores "
                      "other than floating-point values through memory)")
    return (rows, upper, row), None


def _indirect_unsafe(f: RefFacts, ix: ArrayRef, lp: Loop, rows: bool = False) -> str | None:
    """Why the look-ahead load of the index stream `ix` could leave the loop's range
    (with `rows`, the range of the rows from the current one on, _csr_end)."""
    coeff = sym_value(ix.byte_offset().coeff(lp.var))
    if lp.step not in (1, -1):
        return "the loop's step is not ±1"
    if not coeff:
        return f"{ix.text} does not move with {lp.var}"
    if not rows and (lp.cond_op not in ("<", "<=", ">", ">=") or not lp.bounds_invariant):
        return "the loop bound is not a loop-invariant comparison"
    if (lp.step > 0) != (lp.cond_op in ("<", "<=")):
        return "the loop's bound and direction disagree"
    if lp.body_exits:
        return "the body can leave the loop early (break/return/goto/continue/exit)"
    if f.ref.conditional or ix.conditional:
        return "the reference is conditional"
    inner = f.loops[f.loops.index(lp) + 1:]
    if any(lv.trip is None or lv.trip < 1 or lv.body_exits for lv in inner):
        return "an inner loop between it and the pipelining loop may run no iteration"
    return None


def _loaded_base_unsafe(f: RefFacts, pipe: Loop, refs: list[RefFacts]) -> str | None:
    """Why the hints cannot read the base `A[i]` (or `p->q`) of `f` themselves.

    The hints compute addresses at the top of the pipelining loop's body, loading the
    base there.  That load must be one the program makes in the same iteration anyway
    (so it adds no invalid read): a reference of the group (all read the same base) runs
    unconditionally on every iteration from the pipelining loop down, with no early exit
    and inner loops that always run; the others may be conditional (`if (p->x[i] < 0)
    p->x[i] = -p->x[i];` beside `p->x[i] += ...`).  And the
    base must stay the same while the loops inside the last loop it depends on run: no
    pointer is stored through memory there (A[i] = ..., p->q = ...), or the hints would
    chase a stale row.  A base read through more than one pointer (S->g->v, g->rows[i])
    has the hints dereference a loaded link: then the pipelining loop makes no call
    either (one could free or replace a link between the hints and the reference)."""
    if f.ref.base_chain and pipe.body_calls:
        return (f"its base {f.ref.base} is read through more than one pointer and the loop "
                f"at line {pipe.line} makes calls (one might change a link)")
    group = [g for g in refs if g.ref is f.ref or g.leader is f.ref]
    sure = [g for g in group if not g.ref.conditional]
    if not sure:
        return f"its base {f.ref.base} is read from memory and the reference is conditional"
    why = None
    for g in sure:
        inner = g.loops[g.loops.index(pipe):]
        if any(lp.body_exits for lp in inner):
            why = (f"its base {f.ref.base} is read from memory and the body can leave "
                   "the loop early")
        elif any(lp.trip is None or lp.trip < 1 for lp in inner[1:]):
            why = (f"its base {f.ref.base} is read from memory and an inner loop may run "
                   "no iteration")
        else:
            why = None
            break
    if why is not None:
        return why
    if f.ref.base_loops and (not pipe.bound_runtime or pipe.upper is None or not pipe.step):
        return (f"its base {f.ref.base} is read from memory and the bound of {pipe.var} "
                "cannot be evaluated again (the hints could not stop at the row's end)")
    outer = [lp for lp in f.loops if lp.var in f.ref.base_loops]
    scope = f.loops[f.loops.index(outer[-1]) + 1] if outer else f.loops[0]
    if any(scope.start <= w < scope.end for w in f.ref.base_writes):
        return (f"its base {f.ref.base} is read from memory and the loop at line "
                f"{scope.line} stores pointers through memory (it may change)")
    return None


def _rows_ahead(f: RefFacts, pipe: Loop) -> tuple[Loop | None, str]:
    """The loop over rows whose row pointers A[i + d] the hints may read ahead, or why
    none: the row loop directly encloses the loop along the row and steps ±1 to a
    loop-invariant bound (the look-ahead never passes its last iteration), every one of
    its iterations runs the loop along its row (no early exit, that loop not
    conditional, its bounds affine so that they can be evaluated for the row ahead: a
    row whose loop runs no iteration is not read), and no pointer is stored inside it
    (a row pointer read ahead could still be unset)."""
    rows = f.ref.base_rows
    idx = f.loops.index(pipe)
    if rows is None or idx == 0:
        return None, "not a row pointer of an array"
    if f.loops[-1] is not pipe:
        return None, "the reference is in a loop inside the one along the row"
    lp = f.loops[idx - 1]
    _, index, _ = rows
    if set(index.coeffs) != {lp.var} or sym_value(index.coeff(lp.var)) not in (1, -1):
        return None, f"the row index is not ±{lp.var}"
    if lp.step not in (1, -1) or lp.cond_op not in ("<", "<=", ">", ">=") \
            or not (lp.bounds_invariant or lp.bound_fixed) \
            or (lp.step > 0) != (lp.cond_op in ("<", "<=")):
        return None, f"{lp.var} does not step ±1 to a loop-invariant bound"
    if lp.body_exits or pipe.conditional:
        return None, f"an iteration of {lp.var} may skip the row"
    c = sym_value(f.ref.byte_offset().coeff(pipe.var))
    enclosing = {g.var for g in f.loops[:idx]}
    if (pipe.step is None or pipe.step <= 0 or pipe.cond_op not in ("<", "<=") or not c
            or c <= 0 or pipe.lower_aff is None or not set(pipe.lower_aff.coeffs) <= enclosing
            or not (pipe.upper_aff is not None and set(pipe.upper_aff.coeffs) <= enclosing
                    or pipe.bound_fixed)):
        return None, (f"the row's extent along {pipe.var} is not affine in the enclosing "
                      "loops and invariant variables, nor fixed for the nest")
    members = not lp.bounds_invariant or pipe.upper_aff is None
    if members and lp.body_calls:
        return None, (f"a bound reads a struct member and {lp.var}'s body makes calls "
                      "(which could change it)")
    if any(lp.start <= w < lp.end for w in f.ref.base_writes):
        return None, f"pointers are stored inside {lp.var} (a row pointer could be unset)"
    return lp, ""
