"""The C of a rows-ahead hint: across the loop over rows A[i] of `double **A`, the row
pointer `n` rows ahead is read (one the program will read itself) and the start of
that row prefetched."""

from __future__ import annotations

from foresight.compiler.rewrite import bounds
from foresight.compiler.rewrite.bounds import Window
from foresight.compiler.rewrite.cexpr import (
    IMAX,
    UMAX,
    U,
    addr_of,
    address,
    affine,
    all_of,
    assign,
    block,
    call,
    cast,
    cast_atom,
    ceil_div,
    cmp,
    cond,
    const,
    decl,
    divide,
    for_,
    if_,
    index,
    literal,
    load,
    minimum,
    minus,
    negation,
    paren,
    plus,
    post_inc,
    set_to,
    stmt,
    string,
    sym,
    ternary,
    times,
    wsum,
)
from foresight.compiler.rewrite.names import LOCALS
from foresight.compiler.rewrite.nest import NestCode
from foresight.compiler.schedule.plan import Hint


def declare(nest: NestCode, h: Hint) -> None:
    """h's state at nest entry: whether its prolog ran on this entry of the row loop."""
    started = nest.names.hint(nest.index(h)).started
    nest.entry.append(decl("int", (started, "0")))
    nest.reset(h.pipe, set_to(started, "0"))


def code(nest: NestCode, h: Hint, d: str) -> str:
    """At each row (iteration of the row loop), the row pointer of the row `n` rows
    ahead is read, never past the loop's last iteration and only when that row's loop
    runs (its bounds evaluated for that row), and the row's start is prefetched (the
    whole row, up to the look-ahead bytes); `n` covers the look-ahead bytes with rows
    the size of the current one (the paper preset: `d`, C for the loop's distance in
    iterations).  On the first iteration the rows before it likewise.  The stream
    along the row carries on from there."""
    lp, along = h.pipe, h.rows_for
    assert along is not None and h.ref.base_rows is not None
    assert along.lower_aff is not None
    rows, row_index, psize = h.ref.base_rows
    names, paper = nest.names.hint(nest.index(h)), nest.opts.preset == "paper"
    j, t, n, rb, rp = LOCALS.j, LOCALS.t, LOCALS.n, LOCALS.rb, LOCALS.rp
    if lp.bounds_invariant:
        w = Window(lp, bounds.bound(lp), LOCALS.left)
    else:   # a bound fixed for the nest (members of invariant variables): evaluated again
        assert lp.upper is not None
        w = Window(lp, paren(lp.upper), LOCALS.left)
    terms = [times(sym(c), cast_atom(U, j)) for c in row_index.coeffs.values()]
    pointer = cast_atom(U, load(index(rows, 0), paren(plus(
        cast(U, rows), times(wsum(*terms, sym(row_index.const)), cast_atom(U, str(psize)))))))

    def row_bytes(row: str) -> str:
        """Bytes the loop along the row reads in row `row` (0: it runs no iteration)."""
        assert along.lower_aff is not None
        lo = cast(IMAX, affine(along.lower_aff, {lp.var: row}))
        if along.upper_aff is not None:
            hi = cast(IMAX, affine(along.upper_aff, {lp.var: row}))
        else:
            assert along.upper is not None
            hi = cast(IMAX, along.upper)
        last = hi if along.cond_op == "<=" else paren(minus(hi, "1"))
        stride = sym(h.ref.byte_offset().coeff(along.var))
        return cond(cmp(last, ">=", lo),
                    plus(times(cast(U, divide(paren(minus(last, lo)), str(along.step))),
                               stride), literal(h.ref.elem_size)),
                    literal(0))

    row_j = cast_atom(U, j)
    start = address(h.ref, {lp.var: row_j, along.var: affine(along.lower_aff, {lp.var: row_j})},
                     base=rp)
    span = rb if paper else minimum(rb, nest.names.lookahead)
    fetch = block(decl(const(U), (rb, row_bytes(row_j))), if_(cmp(rb, "!=", "0"), block(
        decl(const(U), (rp, pointer)),
        if_(cmp(rp, "!=", "0"), stmt(call("foresight_prefetch_at", addr_of(names.site),
                                          cast_atom("const void *", start), span))))))
    if paper:
        rows_ahead = decl(const(UMAX), (n, cast_atom(UMAX, d)))
    else:
        cb = LOCALS.cb
        rows_ahead = " ".join([
            stmt(cast_atom("void", d)),
            decl(const(U), (cb, row_bytes(cast(U, lp.var)))),
            decl(const(UMAX), (n, ternary(cmp(cb, "==", "0"), "1",
                                              ceil_div(nest.names.lookahead, cb))))])
    prolog = if_(negation(names.started), block(
        decl(UMAX, t), set_to(names.started, "1"),
        for_(assign(t, "1"), all_of(cmp(t, "<", n), w.fits(t)), post_inc(t),
             block(decl(const(UMAX), (j, w.at(t))), fetch))))
    return block(stmt(call("FORESIGHT_SITE", names.site, string(h.ref.text + " (rows ahead)"))),
                 w.declare(), rows_ahead, prolog,
                 if_(w.fits(n), block(decl(const(UMAX), (j, w.at(n))), fetch)))

