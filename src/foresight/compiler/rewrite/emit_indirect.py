"""The C of an indirect hint, a[b[i]] and a[c[b[i]]] through a small table c: each
iteration reads the index b[i + d] the loop itself will read (clamped to the loop's
last iteration) and prefetches the element of `a` it selects; through c, only a value
inside c is followed (the look-ahead load is bounds-checked).  The site also asks the
runtime for random-access advice, ended on every exit from the nest."""

from __future__ import annotations

from foresight.compiler.ir import Sym
from foresight.compiler.rewrite import bounds
from foresight.compiler.rewrite import cexpr as C
from foresight.compiler.rewrite.bounds import Window
from foresight.compiler.rewrite.cexpr import UMAX, U
from foresight.compiler.rewrite.names import LOCALS
from foresight.compiler.rewrite.nest import NestCode
from foresight.compiler.schedule.plan import Hint

# Quiet calls an indirect site takes from the runtime at once: a hot loop pays one shared
# load and store per QUIET_TAKE iterations.
QUIET_TAKE = 256


def declare(nest: NestCode, h: Hint) -> None:
    """h's state at nest entry: whether its prolog ran, its quiet calls left, and its
    random-access advice (ended on every exit from the nest by the cleanup)."""
    names = nest.names.hint(nest.index(h))
    nest.entry.append(C.decl("int", (names.started, "0")))
    nest.entry.append(C.decl("unsigned long", (names.skip, "0")))
    nest.entry.append(C.decl("struct foresight_site *",
                             (f"{names.random} {C.cleanup('foresight_random_end')}", "0")))
    # The prolog runs again on each entry of the loop whose range the look-ahead
    # covers: the pipelining loop, or for the rows of a sparse matrix the loop over
    # the rows (one prolog for all of them).
    nest.reset(h.csr_end[2] if h.csr_end is not None else h.pipe, C.set_to(names.started, "0"))


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
        end = C.index(C.paren(rows), C.affine(upper, {row.var: bounds.last_value(row)}))
        w = Window(lp, C.paren(end), left, guarded=True)
    else:
        w = Window(lp, bounds.bound(lp), left)
    at = C.load(ix.text, C.address(ix, {lp.var: C.cast_atom(U, j)}))
    target = _element(h.ref.base, LOCALS.x, h.ref.strides[0])
    fetch = C.stmt(C.call("foresight_prefetch_at", C.addr_of(names.site),
                          C.cast_atom("const void *", target), str(h.ref.elem_size)))
    mid = h.indirect_middle
    if mid is not None:
        # a[c[b[i]]]: c[b[j]] is read only when b[j] is inside the table c (its size is
        # known); a value from outside it is skipped, never dereferenced.
        assert mid.object_bytes is not None
        n = mid.object_bytes // mid.elem_size
        fetch = C.if_(C.cmp(LOCALS.y, "<", C.cast_atom(UMAX, str(n))), C.block(
            C.decl(C.const(UMAX), (LOCALS.x, C.cast_atom(UMAX, C.load(
                mid.text, _element(mid.base, LOCALS.y, mid.strides[0]))))),
            fetch))
        x = LOCALS.y
    else:
        x = LOCALS.x
    read = C.decl(C.const(UMAX), (x, C.cast_atom(UMAX, at)))
    # Prolog, on the first iteration: the targets of this and the next d - 1
    # iterations (never past the loop's last one), as the steady state covers i + d.
    prolog = C.if_(C.negation(names.started), C.block(
        C.decl(UMAX, t), C.set_to(names.started, "1"),
        C.stmt(C.call("foresight_random_begin", C.addr_of(names.site), C.addr_of(names.random))),
        C.for_(C.assign(t, "0"), C.all_of(C.cmp(t, "<", C.cast_atom(UMAX, d)), w.fits(t)),
               C.post_inc(t), C.block(C.decl(C.const(UMAX), (j, w.at(t))), read, fetch))))
    # A site whose targets keep being resident (a small table) skips the look-ahead
    # load and the call while the runtime says it is quiet, counting the skips down
    # in a local taken QUIET_TAKE at a time (no store to the shared site per call).
    # A skipping iteration does nothing else: not even the iterations left, so a
    # stretch taken near a row's end runs on into the next rows of the nest (a prolog
    # due there waits for it), and at most QUIET_TAKE - 1 taken calls per run of the
    # nest count as skipped without being made.
    skip = names.skip
    quiet = C.call("foresight_site_quiet_take", C.addr_of(names.site), f"{QUIET_TAKE}ul")
    ahead = C.cast_atom(UMAX, d)
    return C.block(
        C.stmt(C.call("FORESIGHT_SITE", names.site, C.string(h.ref.text))),
        C.if_chain([(C.cmp(skip, "!=", "0"), C.decrement(skip))],
                   otherwise=C.block(w.declare(), prolog, C.if_chain([
                       (C.cmp(C.paren(C.assign(skip, quiet)), "!=", "0"), C.decrement(skip)),
                       (C.cmp(left, "!=", "0"), C.block(
                           C.decl(C.const(UMAX), (j, C.ternary(w.fits(ahead), w.at(ahead),
                                                                w.last))),
                           read, fetch))]))))


def _element(base: str, i: str, stride: Sym) -> str:
    """The address of element `i` (a uintmax_t name) of the array at `base`."""
    return C.paren(C.plus(C.cast(U, base), C.times(C.cast_atom(U, i), C.sym(stride))))
