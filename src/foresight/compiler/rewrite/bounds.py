"""C for a loop's bounds as the hints use them: the iterations a loop runs or has left,
the window a look-ahead load must stay within, and the tests at nest entry that choose
a reference's pipelining loop (schedule/plan.py's Version)."""

from __future__ import annotations

from foresight.compiler.ir import Loop, sym_value
from foresight.compiler.rewrite import cexpr as C
from foresight.compiler.rewrite.cexpr import IMAX, UMAX, U
from foresight.compiler.schedule.plan import Move


class Window:
    """What is left of a loop stepping ±1 to `bound` (C text in parentheses), for
    look-ahead loads that must stay within its iterations: `left` is C for the
    iterations after the current one, held in the variable `var` (`declare()`),
    `fits(t)` says whether the iteration `t` ahead still runs, `at(t)` is that
    iteration's index, `last` the last one's."""

    def __init__(self, lp: Loop, bound: str, var: str, guarded: bool = False):
        self.var = var
        self.v = C.cast(UMAX, lp.var)
        self.up = (lp.step or 1) > 0
        self.strict = lp.cond_op in ("<", ">")
        b = C.cast_atom(UMAX, bound)
        self.left = C.minus(b, self.v) if self.up else C.minus(self.v, b)
        if guarded:
            # A bound the current iteration may already be past (0 left then), compared
            # with signs as the program compares them (a negative bound is not huge).
            sb, sv = C.cast_atom(IMAX, bound), C.cast(IMAX, lp.var)
            ahead = C.cmp(sb, ">", sv) if self.up else C.cmp(sv, ">", sb)
            self.left = C.cond(ahead, self.left, "0")
        self.last = b if not self.strict else C.minus(b, "1") if self.up else C.plus(b, "1")

    def declare(self) -> str:
        return C.decl(C.const(UMAX), (self.var, self.left))

    def fits(self, t: str) -> str:
        return C.cmp(self.var, ">" if self.strict else ">=", t)

    def at(self, t: str) -> str:
        return C.plus(self.v, t) if self.up else C.minus(self.v, t)


def bound(lp: Loop) -> str:
    """The loop's bound in uintptr_t from its affine form (a loop whose bounds are
    invariant has one)."""
    assert lp.upper_aff is not None
    return C.affine(lp.upper_aff, {})


def last_value(row: Loop) -> str:
    """The last value of the variable of a loop stepping +1 (`<` or `<=` its bound),
    from its bound as written."""
    assert row.upper is not None
    return C.paren(C.minus(C.paren(row.upper), "1")) if row.cond_op == "<" else C.paren(row.upper)


def rest_iterations(lp: Loop) -> str | None:
    """The iterations `lp` runs after the current one, from its own bound, when the
    bound can be evaluated again in the body; None otherwise."""
    if not lp.bound_runtime or lp.upper is None or not lp.step:
        return None
    v, b = C.cast(UMAX, lp.var), C.cast(UMAX, lp.upper)
    left = C.paren(C.minus(b, v) if lp.step > 0 else C.minus(v, b))
    if lp.cond_op in ("<", ">"):
        left = C.paren(C.minus(left, "1"))
    if abs(lp.step) == 1:
        return left
    return C.paren(C.divide(left, C.cast_atom(UMAX, str(abs(lp.step)))))


def iterations(v: Loop) -> str:
    """The iterations of `v` after its first (0 when it runs none) in uintptr_t, from
    bounds on invariant variables evaluated at nest entry: compared as signed values,
    their difference taken in uintptr_t (no signed overflow, even for a loop from
    LONG_MIN to LONG_MAX)."""
    assert v.step is not None
    lo, hi = C.signed(v.lower_sym), C.signed(v.upper_sym)
    ulo, uhi = C.paren(C.sym(v.lower_sym or {})), C.paren(C.sym(v.upper_sym or {}))
    strict = v.cond_op in ("<", ">")
    if v.step > 0:
        runs, span = C.cmp(lo, "<" if strict else "<=", hi), C.minus(uhi, ulo)
    else:
        runs, span = C.cmp(lo, ">" if strict else ">=", hi), C.minus(ulo, uhi)
    if strict:
        span = C.minus(C.paren(span), "1")
    span = C.paren(span)
    if abs(v.step) != 1:
        span = C.divide(span, C.literal(abs(v.step)))
    return C.cond(runs, C.cast(U, span), C.literal(0))


def move_holds(move: Move, block: int) -> str:
    """Whether all iterations of the move's loop step the address by less than a block
    in total, |coeff · step| · trip < block, written so that nothing overflows."""
    v = move.loop
    assert v.step is not None
    c = sym_value(move.coeff)
    if c is not None:
        a = C.wrapped_abs(c * v.step)
        if a == 0 or (block - 1) // a == 0:   # never / always a block or more
            return "1" if a == 0 else "0"
        return C.cmp(iterations(v), "<", C.literal((block - 1) // a))
    a = C.abs_sym(move.coeff, v.step)
    limit = C.divide(C.paren(C.minus(C.literal(block), "1")), a)
    return C.paren(C.any_of(C.cmp(a, "==", "0"), C.cmp(iterations(v), "<", limit)))


def version(moves: tuple[Move, ...], block: int) -> str:
    """How many of `moves` hold in a row, innermost first: the candidate pipelining loop
    the nest takes (plan.Version)."""
    out = str(len(moves))
    for taken in reversed(range(len(moves))):
        out = C.cond(move_holds(moves[taken], block), out, str(taken))
    return out
