"""The C of an indirect hint, a[b[i]] and a[c[b[i]]] through a small table c: each
iteration reads the index b[i + d] the loop itself will read (clamped to the loop's
last iteration) and prefetches the element of `a` it selects; through c, only a value
inside c is followed (the look-ahead load is bounds-checked).  The site also asks the
runtime for random-access advice, ended on every exit from the nest."""

from __future__ import annotations

from foresight.compiler.ir import Sym
from foresight.compiler.rewrite import bounds
from foresight.compiler.rewrite.bounds import Window
from foresight.compiler.rewrite.cexpr import (
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
    cleanup,
    cmp,
    cond,
    const,
    decl,
    decrement,
    for_,
    if_,
    if_chain,
    index,
    load,
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
)
from foresight.compiler.rewrite.names import LOCALS
from foresight.compiler.rewrite.nest import NestCode
from foresight.compiler.schedule.plan import Hint

# Quiet calls an indirect site takes from the runtime at once: a hot loop pays one shared
# load and store per QUIET_TAKE iterations, taking no more than the loop has left.
QUIET_TAKE = 256


def declare(nest: NestCode, h: Hint) -> None:
    """h's state at nest entry: whether its prolog ran, its quiet calls left, and its
    random-access advice (ended on every exit from the nest by the cleanup)."""
    names = nest.names.hint(nest.index(h))
    nest.entry.append(decl("int", (names.started, "0")))
    nest.entry.append(decl("unsigned long", (names.skip, "0")))
    nest.entry.append(decl("struct foresight_site *",
                           (f"{names.random} {cleanup('foresight_random_end')}", "0")))
    # The prolog runs again on each entry of the loop whose range the look-ahead
    # covers: the pipelining loop, or for the rows of a sparse matrix the loop over
    # the rows (one prolog for all of them).
    nest.reset(h.csr_end[2] if h.csr_end is not None else h.pipe, set_to(names.started, "0"))


def code(nest: NestCode, h: Hint, d: str) -> str:
    """At the top of the pipelining loop's body: the target `d` (C: the distance in
    iterations) iterations ahead, and on the first iteration those of the iterations
    before it."""
    lp, ix = h.pipe, h.indirect_index
    assert ix is not None
    names = nest.names.hint(nest.index(h))
    j, t, left = LOCALS.j, LOCALS.t, LOCALS.left
    if h.csr_end is not None:
        rows, upper, row = h.csr_end
        w = Window(lp, paren(index(paren(rows), affine(upper, {row.var: bounds.last_value(row)}))),
                   left, guarded=True)
    else:
        w = Window(lp, bounds.bound(lp), left)
    at = load(ix.text, address(ix, {lp.var: cast_atom(U, j)}))
    fetch = stmt(call("foresight_prefetch_at", addr_of(names.site),
                      cast_atom("const void *", _element(h.ref.base, LOCALS.x, h.ref.strides[0])),
                      str(h.ref.elem_size)))
    mid = h.indirect_middle
    if mid is not None:
        # a[c[b[i]]]: c[b[j]] is read only when b[j] is inside the table c (its size is
        # known); a value from outside it is skipped, never dereferenced.
        assert mid.object_bytes is not None
        n = mid.object_bytes // mid.elem_size
        fetch = if_(cmp(LOCALS.y, "<", cast_atom(UMAX, str(n))), block(
            decl(const(UMAX), (LOCALS.x, cast_atom(UMAX, load(
                mid.text, _element(mid.base, LOCALS.y, mid.strides[0]))))),
            fetch))
        x = LOCALS.y
    else:
        x = LOCALS.x
    read = decl(const(UMAX), (x, cast_atom(UMAX, at)))
    # Prolog, on the first iteration: the targets of this and the next d - 1
    # iterations (never past the loop's last one), as the steady state covers i + d.
    prolog = if_(negation(names.started), block(
        decl(UMAX, t), set_to(names.started, "1"),
        stmt(call("foresight_random_begin", addr_of(names.site), addr_of(names.random))),
        for_(assign(t, "0"), all_of(cmp(t, "<", cast_atom(UMAX, d)), w.fits(t)), post_inc(t),
             block(decl(const(UMAX), (j, w.at(t))), read, fetch))))
    # A site whose targets keep being resident (a small table) skips the look-ahead
    # load and the call while the runtime says it is quiet, counting the skips down
    # in a local taken QUIET_TAKE at a time (no store to the shared site per call),
    # never more than the loop has iterations left (they count as skipped calls).
    skip = names.skip
    take = cond(cmp(left, "<", str(QUIET_TAKE)), cast_atom("unsigned long", left),
                f"{QUIET_TAKE}ul")
    ahead = cast_atom(UMAX, d)
    return block(
        stmt(call("FORESIGHT_SITE", names.site, string(h.ref.text))), w.declare(), prolog,
        if_chain([
            (cmp(skip, "!=", "0"), decrement(skip)),
            (cmp(paren(assign(skip, call("foresight_site_quiet_take", addr_of(names.site),
                                         take))), "!=", "0"), decrement(skip)),
            (cmp(left, "!=", "0"), block(
                decl(const(UMAX), (j, ternary(w.fits(ahead), w.at(ahead), w.last))),
                read, fetch))]))


def _element(base: str, i: str, stride: Sym) -> str:
    """The address of element `i` (a uintmax_t name) of the array at `base`."""
    return paren(plus(cast(U, base), times(cast_atom(U, i), sym(stride))))
