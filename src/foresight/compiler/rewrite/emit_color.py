"""The text of a parallel loop's page-coloring summary (paper 4, Section 5.1's "function
calls that pass the array access patterns to a run-time library, along with information
known only at program start-up time"): declare each array, one partition or shift per
reference, then apply, right before the loop's `#pragma omp`, evaluated each time the
loop is reached (the runtime keeps a summary once).

The text goes before the directive's line and the loop is wrapped in braces: after
`#pragma omp parallel` or an unbraced `if`, the directive and its loop stay one
statement.  A `#line` gives the directive its line back.
"""

from __future__ import annotations

import zlib

from foresight.compiler.analysis.partition import ParallelLoop, PartitionRef
from foresight.compiler.ir import sym_value
from foresight.compiler.rewrite import cexpr as c
from foresight.compiler.rewrite.splice import Insertion, line_name

COUNT = "__fs_color_n"     # the loop's iterations
THREADS = "__fs_color_p"   # the threads sharing them
SCHED = "__fs_color_s"     # the schedule (FORESIGHT_COLOR_*)
LOW = "__fs_color_lo"      # the loop variable's lowest value

def unevaluable(pl: ParallelLoop) -> str | None:
    """Why the summary's run-time values cannot be computed before the loop, or None: the
    bounds are taken from the front end's affine forms (side effects in their text, a
    macro's `(n++, N)`, are not repeated), the clauses' texts only when repeatable."""
    lp, omp = pl.loop, pl.omp
    if lp.lower_aff is None or lp.upper_aff is None:
        return "its bounds are not affine in the enclosing loops' variables"
    if not omp.repeatable:
        return (f"its chunk or num_threads (`{omp.chunk or omp.num_threads}`) may have "
                "side effects: not evaluated twice")
    return None


def _long(a) -> str:
    v = sym_value(a)
    return f"{v}L" if v is not None else c.cast("long", c.sym(a))


def _bound(aff) -> str:
    return c.cast("long", c.affine(aff, {}))


def loop_id(path: str, line: int) -> int:
    """Loops are told apart across files by their place: a hash of file and line."""
    return zlib.crc32(f"{path}:{line}".encode()) & 0x7FFFFFFF


def _count(pl: ParallelLoop) -> str:
    """The iterations, in uintptr_t arithmetic (it wraps: no overflow, and no warning of
    one when the bounds fold to constants) read as a long: <= 0 for none."""
    lp = pl.loop
    lo, hi = c.affine(lp.lower_aff, {}), c.affine(lp.upper_aff, {})
    n = c.minus(hi, lo) if lp.step > 0 else c.minus(lo, hi)
    return c.cast("long", c.plus(n, "1") if lp.cond_op in ("<=", ">=") else n)


def _first(r: PartitionRef, forward_loop: bool) -> tuple[str, int, bool]:
    """(first unit, shift, reversed): the loop's iteration k touches unit first + k +
    shift, with iteration 0 on the first thread, or, reversed, on the last (see
    foresight_color_partition).  LOW is the variable's lowest value, whichever way the
    loop runs."""
    last = c.paren(c.minus(c.plus(LOW, COUNT), "1"))  # its highest value
    offset = c.cast("long", c.sym(r.offset)) if r.offset else None
    if r.sign > 0:
        first = c.paren(c.plus(LOW, offset)) if offset else LOW
        return first, r.shift, not forward_loop
    # A[c - v]: unit c - v, lowest at the variable's highest value
    low = c.minus(f"{r.shift}L", last)
    return c.paren(c.plus(low, offset) if offset else low), 0, forward_loop


def summary_insertions(pl: ParallelLoop, directive_at: int, directive_line: int,
                       path: str, level: int) -> list[Insertion]:
    lp, omp = pl.loop, pl.omp
    forward = lp.step > 0
    low = _bound(lp.lower_aff) if forward else \
        c.minus(_bound(lp.lower_aff), c.paren(c.minus(COUNT, "1")))
    threads = (c.cast("unsigned", omp.num_threads) if omp.num_threads is not None
               else c.call("foresight_color_threads",
                           "0" if "parallel" in omp.directive.split() else "1"))
    if omp.chunk is None:
        sched, chunk = c.call("foresight_color_static"), "0"
    else:
        sched, chunk = "FORESIGHT_COLOR_CYCLIC", c.cast("size_t", omp.chunk)
    ident = str(loop_id(path, lp.line))
    # One summary per distinct partition (x[j][i-1], x[j][i], x[j][i+1] are one), a
    # store if any of its references stores.
    parts: dict[tuple, bool] = {}
    for r in pl.refs:
        key = (r.base, c.sym(r.unit), *_first(r, forward), r.object_bytes)
        parts[key] = parts.get(key, False) or r.is_write
    calls, declared = [], set()
    for (base, unit, first, shift, rev, object_bytes), write in parts.items():
        # the array: its whole object, else up to the last unit any reference touches
        if base not in declared:
            declared.add(base)
            if object_bytes is not None:
                extent = str(object_bytes)
            else:
                # (in bytes: references with coefficients 1 and 2 have units of one
                # and of two strides)
                ends = list(dict.fromkeys(
                    c.paren(c.times(c.cast("size_t", c.paren(c.plus(f, c.plus(COUNT, f"{s}L")))),
                                    u))
                    for b, u, f, s, _, _ in parts if b == base))
                top = ends[0]
                for e in ends[1:]:
                    top = c.paren(c.ternary(c.cmp(e, ">", top), e, top))
                extent = top
            calls.append(c.stmt(c.call("foresight_color_array",
                                       c.cast("const void *", base), extent)))
        flags = [SCHED]
        if rev:
            flags.append("FORESIGHT_COLOR_REVERSE")
        if write:
            flags.append("FORESIGHT_COLOR_WRITE")
        fn = "foresight_color_partition" if shift == 0 else "foresight_color_comm"
        args = [c.cast("const void *", base), c.cast("size_t", unit), first, COUNT]
        if shift:
            args.append(str(shift))
        args += [" | ".join(flags), chunk, THREADS, ident + "u"]
        calls.append(c.stmt(c.call(fn, *args)))
    # Each reference's walk of its unit, in source order, for the cache simulator's model:
    # a read repeated with no store in between is one load (the compiler keeps the value
    # in a register; after a store through a pointer that may alias, it loads again).
    walks, stores = {}, 0
    # A stride naming what the unit does not (known to be in scope: the unit is passed)
    # leaves the loop without walks: the model walks its units a line at a time.
    named = {a for r in pl.refs for m in r.unit for a in m}
    walked = all(all(a in named for m in r.stride for a in m) for r in pl.refs)
    for r in pl.refs if walked else ():
        key = (r.base, c.sym(r.unit), *_first(r, forward), _long(r.within), _long(r.stride),
               r.phase)
        if r.is_write and r.also_read:      # x[i] += ...: the load, then the store
            walks.setdefault((*key, False, stores), None)
        stores += r.is_write
        walks.setdefault((*key, r.is_write, stores), None)
    for seq, (base, unit, first, shift, rev, within, stride, phase, write, _) in \
            enumerate(walks):
        flags = " | ".join(["0u", *(["FORESIGHT_COLOR_REVERSE"] if rev else []),
                            *(["FORESIGHT_COLOR_WRITE"] if write else [])])
        calls.append(c.stmt(c.call(
            "foresight_color_access", c.cast("const void *", base), c.cast("size_t", unit),
            first, COUNT, f"{shift}L", within, stride, flags, ident + "u",
            f"{phase}u", f"{seq}u")))
    for base, size in pl.others:   # used without a summary: every thread's pages
        calls.append(c.stmt(c.call("foresight_color_array", c.cast("const void *", base),
                                   str(size))))
    calls.append(c.stmt(c.call("foresight_color_apply")))
    body = " ".join(calls)
    code = (f"{{ {{ const long {COUNT} = {_count(pl)}; if ({COUNT} > 0) {{ "
            f"const long {LOW} = {low}; const unsigned {THREADS} = {threads}, "
            f"{SCHED} = {sched}; {body} }} }}\n#line {directive_line} {line_name(path)}\n")
    return [Insertion(directive_at, 1, level, code), Insertion(lp.end, 0, -level, " }")]
