"""The C of a rows-ahead hint: across the loop over rows A[i] of `double **A`, the row
pointer `n` rows ahead is read (one the program will read itself) and the start of
that row prefetched."""

from __future__ import annotations

from foresight.compiler.rewrite import bounds
from foresight.compiler.rewrite import cexpr as C
from foresight.compiler.rewrite.bounds import Window
from foresight.compiler.rewrite.cexpr import IMAX, UMAX, U
from foresight.compiler.rewrite.names import LOCALS
from foresight.compiler.rewrite.nest import NestCode
from foresight.compiler.schedule.plan import Hint


def declare(nest: NestCode, h: Hint) -> None:
    """h's state at nest entry: whether its prolog ran on this entry of the row loop."""
    started = nest.names.hint(nest.index(h)).started
    nest.entry.append(C.decl("int", (started, "0")))
    nest.reset(h.pipe, C.set_to(started, "0"))


def code(nest: NestCode, h: Hint, d: str) -> str:
    """At each row (iteration of the row loop), the row pointer of the row `n` rows
    ahead is read, never past the loop's last iteration and only when that row's loop
    runs (its bounds evaluated for that row), and the row's start is prefetched (the
    whole row, up to the look-ahead bytes); `n` covers the look-ahead bytes with rows
    the size of the current one (the paper preset: `d`, C for the loop's distance in
    iterations).  On the first iteration the rows before it likewise.  The stream
    along the row carries on from there.

    Rows longer than the look-ahead get no rows-ahead hint (but under the paper
    preset): the next row's start would be asked for a whole row early, more than the
    look-ahead, and where the rows are in the page cache its pages, older than those
    the program reads meanwhile, are the first the kernel reclaims (seismo's 16 MiB
    channels, 4 MiB look-ahead: 68 MiB read again of 60 MiB so prefetched).  The
    stream along the row prefetches its start when it gets there."""
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
        w = Window(lp, C.paren(lp.upper), LOCALS.left)
    terms = [C.times(C.sym(c), C.cast_atom(U, j)) for c in row_index.coeffs.values()]
    offset = C.times(C.wsum(*terms, C.sym(row_index.const)), C.cast_atom(U, str(psize)))
    pointer = C.cast_atom(U, C.load(C.index(rows, 0), C.paren(C.plus(C.cast(U, rows), offset))))

    def row_bytes(row: str) -> str:
        """Bytes the loop along the row reads in row `row` (0: it runs no iteration)."""
        assert along.lower_aff is not None
        lo = C.cast(IMAX, C.affine(along.lower_aff, {lp.var: row}))
        if along.upper_aff is not None:
            hi = C.cast(IMAX, C.affine(along.upper_aff, {lp.var: row}))
        else:
            assert along.upper is not None
            hi = C.cast(IMAX, along.upper)
        last = hi if along.cond_op == "<=" else C.paren(C.minus(hi, "1"))
        stride = C.sym(h.ref.byte_offset().coeff(along.var))
        steps = C.cast(U, C.divide(C.paren(C.minus(last, lo)), str(along.step)))
        return C.cond(C.cmp(last, ">=", lo),
                      C.plus(C.times(steps, stride), C.literal(h.ref.elem_size)), C.literal(0))

    row_j = C.cast_atom(U, j)
    start = C.address(h.ref, {lp.var: row_j,
                              along.var: C.affine(along.lower_aff, {lp.var: row_j})}, base=rp)
    span = rb if paper else C.minimum(rb, nest.names.lookahead)
    prefetch = C.stmt(C.call("foresight_prefetch_at", C.addr_of(names.site),
                             C.cast_atom("const void *", start), span))
    fetch = C.block(C.decl(C.const(U), (rb, row_bytes(row_j))),
                    C.if_(C.cmp(rb, "!=", "0"), C.block(C.decl(C.const(U), (rp, pointer)),
                                                        C.if_(C.cmp(rp, "!=", "0"), prefetch))))
    if paper:
        rows_ahead = C.decl(C.const(UMAX), (n, C.cast_atom(UMAX, d)))
    else:
        cb = LOCALS.cb
        rows_ahead = " ".join([
            C.stmt(C.cast_atom("void", d)),
            C.decl(C.const(U), (cb, row_bytes(C.cast(U, lp.var)))),
            C.decl(C.const(UMAX), (n, C.ternary(C.cmp(cb, "==", "0"), "1",
                                                C.ceil_div(nest.names.lookahead, cb))))])
    prolog = C.if_(C.negation(names.started), C.block(
        C.decl(UMAX, t), C.set_to(names.started, "1"),
        C.for_(C.assign(t, "1"), C.all_of(C.cmp(t, "<", n), w.fits(t)), C.post_inc(t),
               C.block(C.decl(C.const(UMAX), (j, w.at(t))), fetch))))
    site = C.stmt(C.call("FORESIGHT_SITE", names.site, C.string(h.ref.text + " (rows ahead)")))
    steady = C.if_(w.fits(n), C.block(C.decl(C.const(UMAX), (j, w.at(n))), fetch))
    if not paper:
        steady = C.if_(C.cmp(LOCALS.cb, "<=", nest.names.lookahead), steady)
    return C.block(site, w.declare(), rows_ahead, prolog, steady)

