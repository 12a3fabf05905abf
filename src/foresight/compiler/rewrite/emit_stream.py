"""The C of a stream hint (a strided reference, pointer walks included): its entry in
the nest's table for foresight_nest_enter with its run-time values, and the countdown
its pipelining loop's streams share at the top of the loop's body, which lets the
runtime step them (foresight_streams_step in foresight.h: prefetch ahead of each
reference, release behind it).

A pointer walk `for (p = a; p < e; p++) ... *p` needs nothing of its own here: the
front end gives its references base 0 and the variable p, the address, as a subscript
of one byte per unit, and the loop's step in bytes, so `address` and `rest_iterations`
render it as any other stream.
"""

from __future__ import annotations

from foresight.compiler.ir import Loop, sym_value
from foresight.compiler.rewrite import bounds
from foresight.compiler.rewrite import cexpr as C
from foresight.compiler.rewrite.cexpr import UMAX, U
from foresight.compiler.rewrite.names import LOCALS
from foresight.compiler.rewrite.nest import NestCode
from foresight.compiler.schedule.plan import Hint


def setup(nest: NestCode, h: Hint, p: int, lead: int,
          gate: tuple[Loop, int] | None = None) -> tuple[str, list[str]]:
    """h's entry in the nest's table of streams (its pipelining loop number `p`, its
    `lead` from schedule/distance.py and its constant flags) and its four run-time values
    (C): the step per iteration, across an outer loop or stepping on one run in g
    (`gate`, plan.NestPlan.gates) its region and low, and the flags only known at run
    time (whether another version of the nest runs; whether one iteration of a loop
    touches more than memory, for releases)."""
    step = h.pipe.step or 1
    coeff = h.ref.byte_offset().coeff(h.pipe.var)
    delta = C.times(C.sym(coeff), C.cast(U, str(step))) if step >= 0 else \
        C.minus(C.literal(0), C.times(C.sym(coeff), C.literal(-step)))
    flags: list[str] = []
    dynamic = [] if h.version is None else [
        C.cond(nest.chosen(h), "0u", "FORESIGHT_STREAM_IDLE")]
    region = ["0", "0"]
    if h.inner_at_lower or gate is not None:
        open_ = None if gate is None else gate_open(nest, h)
        region = list(nest.shared("fp", lambda fp, lo: " ".join(
            _region(h, fp, lo, gate, open_)), 2))
        flags.append("FORESIGHT_STREAM_REGION")
    if bounds.rest_iterations(h.pipe) is not None:
        flags.append("FORESIGHT_STREAM_RUNS")
    if rows_tracked(h):
        flags.append("FORESIGHT_STREAM_ROWS")
    if h.release is not None:
        if h.release_if_exceeds is not None and h.volume is None:
            flags.append("FORESIGHT_STREAM_SWEEP")   # measured by the runtime as it runs
        elif h.release_if_exceeds is not None:
            dynamic.append(C.cond(_exceeds(nest, h), "FORESIGHT_STREAM_RELEASE", "0u"))
        else:
            flags.append("FORESIGHT_STREAM_RELEASE")
    return (C.init_list(str(p), str(lead), C.bit_or(*flags)),
            [delta, *region, C.bit_or(*dynamic)])


def _exceeds(nest: NestCode, h: Hint) -> str:
    """C true where one iteration of h.release_if_exceeds touches more than memory
    (h.volume evaluated at nest entry, once for the hints of the same volume)."""
    volume, page = h.volume, nest.opts.page_size
    assert volume is not None
    vol = nest.shared("vol", lambda v: " ".join(volume_code(volume, page, v)))[0]
    return C.cmp(vol, ">", C.cast_atom(U, C.call("foresight_memory_bytes")))


def gate_open(nest: NestCode, h: Hint) -> str | None:
    """For a stream of a gated pipelining loop (plan.NestPlan.gates): None where it may
    step on one run in g whenever it runs, else the name of the value, set at nest entry,
    that says whether it may in this entry (it may not where it releases behind: one
    iteration of the loop around touches more than memory)."""
    if h.release is None:
        return None
    over = _exceeds(nest, h)
    return nest.shared("go", lambda go: C.decl("const int", (go, C.negation(C.paren(over)))))[0]


def step(nest: NestCode, pipe: Loop, streams: list[Hint], first: int) -> str:
    """Per iteration of the pipelining loop: count down to the iteration where one of
    its streams' look-ahead address enters a new granule, and there let the runtime
    step the streams due (entries `first`... of the nest's array), given each one's
    current and trailing address.

    A stream is the reference's address sequence, not one run of the pipelining
    loop: the countdown restarts at 0 where the loop starts (the runtime then decides
    whether the run continues the last one).  Where the loop's bound can be evaluated
    again, the step is told the iterations left in the run, so that hints stay within
    it (past its end may be another object, or nothing)."""
    names, pc = nest.names, nest.names.countdown(pipe)
    sp = C.plus(names.streams, str(first)) if first else names.streams
    rest = bounds.rest_iterations(streams[0].pipe) or "0"
    # The test is true but once per granule: FORESIGHT_COUNTING tells the C compiler, so
    # the loop's values stay in registers past the step's call (foresight.h).
    code = C.if_chain([(C.call("FORESIGHT_COUNTING", C.cmp(pc, ">", "1")), C.decrement(pc))],
                      C.block(*_step_call(nest, pipe, streams, sp, rest)))
    chosen = _any_chosen(nest, streams)
    return code if chosen is None else C.if_(chosen, C.block(code))


def _any_chosen(nest: NestCode, streams: list[Hint]) -> str | None:
    """C true where the nest's entry chose a version that steps one of `streams`, or None
    where one of them is in every version (plan.Version)."""
    if not all(h.version is not None for h in streams):
        return None
    return C.any_of(*dict.fromkeys(nest.chosen(h) for h in streams))


def strip(nest: NestCode, pipe: Loop, streams: list[Hint], first: int,
          gated: bool = False) -> str:
    """The paper's loop splitting (Section 3.2.2, with a run-time distance): at the top
    of the pipelining loop's body, step its streams and open an inner loop that runs the
    body up to the iteration where the next step is due (the iterations left at most),
    with no call and no test of the hints inside; the loop's own increment and
    condition take over after it.  Statements ending in the inner loop's open brace
    (rewrite/emit.py closes it at the end of the body).

        N = rest + 1 (at most UINTMAX_MAX);
        { ...; pc = foresight_streams_step(..., pc, at, N - 1);
                        if (pc >= 1 && pc < N) N = pc; pc = 1; }
        for (K = N; K != 0; --K != 0 ? (void)(i++) : (void)0) { BODY }

    A `continue` in the body goes to the inner loop's increment, as to the loop's own;
    the countdown is 0 on the first step of a run (its reset) and 1 after; `gated`
    streams (plan.NestPlan.gates) step in a run whose reset left it below UINTPTR_MAX
    only (the others run as one strip)."""
    names, pc = nest.names, nest.names.countdown(pipe)
    n, k = names.strip(pipe)
    rest = bounds.rest_iterations(pipe)
    assert rest is not None and pipe.incr is not None
    sp = C.plus(names.streams, str(first)) if first else names.streams
    stepping = C.block(*_step_call(nest, pipe, streams, sp, C.minus(n, "1")),
                       C.if_(C.all_of(C.cmp(pc, ">=", "1"), C.cmp(pc, "<", n)), C.set_to(n, pc)),
                       C.set_to(pc, "1"))
    chosen = _any_chosen(nest, streams)
    due = [C.paren(c) for c in (chosen, C.cmp(pc, "!=", "UINTPTR_MAX") if gated else None)
           if c]
    if due:
        stepping = C.if_(C.all_of(*due) if len(due) > 1 else chosen or due[0], stepping)
    incr = C.ternary(C.cmp(f"--{k}", "!=", "0"), f"(void)({pipe.incr})", "(void)0")
    # N = rest + 1, but UINTMAX_MAX where that wraps to 0 (all of a 64-bit range: the
    # last iteration is then a strip of its own).
    return (C.decl(UMAX, (n, rest)) + " " + C.if_(C.cmp(n, "!=", "UINTMAX_MAX"), f"{n}++;")
            + " " + stepping + f" for ({UMAX} {k} = {n}; {k} != 0; {incr}) {{")


def _step_call(nest: NestCode, pipe: Loop, streams: list[Hint], sp: str,
               rest: str) -> list[str]:
    """The statements that step the streams (entries from `sp` on) of `pipe`: their sites
    and addresses, and the call that sets the countdown."""
    names, pc = nest.names, nest.names.countdown(pipe)
    sites, at, own = [], [], []
    for h in streams:
        site = names.hint(nest.index(h)).site
        # A hint of a version of the nest (plan.Version) names its pipelining loop.
        label = h.ref.text if h.version is None else f"{h.ref.text} (across {h.pipe.var})"
        sites.append(C.stmt(C.call("FORESIGHT_SITE", site, C.string(label))))
        own.append(C.addr_of(site))
        at += [C.address(h.ref, subst(h)),
               C.address(h.release, subst(h)) if h.release is not None else "0"]
    return [*sites,
            C.decl("static struct foresight_site *const",
                   (C.index(LOCALS.sites, ""), C.init_list(*own))),
            C.decl(C.const(U), (C.index(LOCALS.at, ""), C.init_list(*at))),
            C.set_to(pc, C.call("foresight_streams_step", sp, str(len(streams)),
                                LOCALS.sites, pc, LOCALS.at, rest))]


def subst(h: Hint) -> dict[str, str]:
    """The loops moved inside h's pipelining loop, at their lower bounds."""
    return {lp.var: C.sym(lp.lower_sym or {}) for lp in h.inner_at_lower}


def rows_tracked(h: Hint) -> bool:
    """A stream along rows reached through row pointers (A[i] of double **A), whose
    runs are checked for lying one after another: only then do hints go past a run's end."""
    return (bool(h.ref.base_loops) and not h.inner_at_lower
            and bounds.rest_iterations(h.pipe) is not None)


def _region(h: Hint, fp: str, lo: str, gate: tuple[Loop, int] | None = None,
            open_: str | None = None) -> list[str]:
    """For a stream pipelined across an outer loop (Section 3.2.2.2), statements that set
    `fp` to the bytes of the region one iteration of it touches through the loops moved
    inside, starting `lo` bytes below the address at their lower bounds (loops moving it
    downwards); for a stream stepping on one run in g (`gate`: the loop around and g),
    the bytes 2g iterations of that loop touch from the current one on, this group's and
    the next's (where `open_`, gate_open's value, is true).  A stride of a page or more,
    at least twice the region, prefetches just that region per iteration, in pages: a
    block there would read a block for a few bytes of each row (the first 4 doubles of
    256 KiB rows, 768 MiB under a 64 MiB cap: 387 MiB read and 0.36-0.41 s with blocks,
    12.4 MiB and 0.034-0.047 s with pages, O 0.72-0.84 s; `foresight run --mem 64M
    --cold --readahead-kb 128`)."""
    out = [C.decl(U, (fp, C.literal(h.ref.elem_size)), (lo, "0"))]
    for v in h.inner_at_lower:
        assert v.step is not None
        coeff = h.ref.byte_offset().coeff(v.var)
        c = sym_value(coeff)
        e = C.times(C.abs_sym(coeff, v.step), bounds.iterations(v))
        if c is not None:   # the direction is known (downwards: wraps past the middle)
            down = (c * v.step) % 2**64 > (2**64 - 1) // 2
            out.append(C.add_to(fp, e) + (" " + C.add_to(lo, e) if down else ""))
            continue
        st = C.paren(C.times(C.sym(coeff), C.cast(U, str(v.step))))
        out.append(C.block(C.decl(C.const(U), (LOCALS.e, e)), C.add_to(fp, LOCALS.e),
                           C.if_(C.negative(st), C.add_to(lo, LOCALS.e))))
    if gate is not None:
        around, g = gate
        assert around.step is not None
        moved = sym_value(h.ref.byte_offset().coeff(around.var))
        assert moved is not None
        if moved:   # at most the iterations of the loop around after the current one
            e = C.times(C.paren(C.minimum(C.literal(2 * g - 1), bounds.iterations(around))),
                        C.literal(abs(moved * around.step)))
            if open_ is not None:
                e = C.ternary(open_, e, "0")
            out.append(C.add_to(fp, e) + (" " + C.add_to(lo, e) if moved * around.step < 0
                                          else ""))
    return out


def volume_code(volume: list[tuple[int, list[tuple[dict | None, Loop]]]], page: int,
                var: str) -> list[str]:
    """Statements that set `var` to the bytes one iteration of a loop (or one run of the
    nest) touches (release.runtime_volume), in memory rather than in address range: per
    reference, from its element outward through the inner loops moving it (innermost
    first), each loop adds per extra iteration its stride (step included), but at most
    the footprint so far rounded up to pages, so a loop stepping a page or more adds
    whole pages, not the bytes it skips (a line of `rhs[k][j][i][m]` along k touches one
    page per plane, not the planes); a loop reading a new row pointer per iteration
    (stride None) adds the whole footprint.
    Bounds are evaluated as signed values at nest entry."""
    f, st, pg = LOCALS.f, LOCALS.stride, LOCALS.page
    out = [C.decl(U, (var, "0"))]
    for elem, moves in volume:
        steps = [C.decl(U, (f, C.literal(elem)))]
        for coeff, v in reversed(moves):
            assert v.step is not None
            stride = "UINTPTR_MAX" if coeff is None else C.abs_sym(coeff, v.step)
            steps.append(C.block(C.decl(C.const(U), (st, stride), (pg, C.align_up(f, page))),
                                 C.add_to(f, C.times(bounds.iterations(v), C.minimum(st, pg)))))
        out.append(C.block(*steps, C.add_to(var, f)))
    return out

