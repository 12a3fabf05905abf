"""C for a loop's bounds as the hints use them: the iterations a loop runs or has left,
the window a look-ahead load must stay within, and the tests at nest entry that choose
a reference's pipelining loop (schedule/plan.py's Version)."""

from __future__ import annotations

from foresight.compiler.ir import Loop, sym_value
from foresight.compiler.rewrite.cexpr import (
    IMAX,
    UMAX,
    U,
    abs_sym,
    affine,
    any_of,
    cast,
    cast_atom,
    cmp,
    cond,
    const,
    decl,
    divide,
    literal,
    minus,
    paren,
    plus,
    signed,
    wrapped_abs,
)
from foresight.compiler.schedule.plan import Move


class Window:
    """What is left of a loop stepping ±1 to `bound` (C text in parentheses), for
    look-ahead loads that must stay within its iterations: `left` is C for the
    iterations after the current one, held in the variable `var` (`declare()`),
    `fits(t)` says whether the iteration `t` ahead still runs, `at(t)` is that
    iteration's index, `last` the last one's."""

    def __init__(self, lp: Loop, bound: str, var: str, guarded: bool = False):
        self.var = var
        self.v = cast(UMAX, lp.var)
        self.up = (lp.step or 1) > 0
        self.strict = lp.cond_op in ("<", ">")
        b = cast_atom(UMAX, bound)
        self.left = minus(b, self.v) if self.up else minus(self.v, b)
        if guarded:
            # A bound the current iteration may already be past (0 left then), compared
            # with signs as the program compares them (a negative bound is not huge).
            sb, sv = cast_atom(IMAX, bound), cast(IMAX, lp.var)
            self.left = cond(cmp(sb, ">", sv) if self.up else cmp(sv, ">", sb), self.left, "0")
        self.last = b if not self.strict else minus(b, "1") if self.up else plus(b, "1")

    def declare(self) -> str:
        return decl(const(UMAX), (self.var, self.left))

    def fits(self, t: str) -> str:
        return cmp(self.var, ">" if self.strict else ">=", t)

    def at(self, t: str) -> str:
        return plus(self.v, t) if self.up else minus(self.v, t)


def bound(lp: Loop) -> str:
    """The loop's bound in uintptr_t from its affine form (a loop whose bounds are
    invariant has one)."""
    assert lp.upper_aff is not None
    return affine(lp.upper_aff, {})


def last_value(row: Loop) -> str:
    """The last value of the variable of a loop stepping +1 (`<` or `<=` its bound),
    from its bound as written."""
    assert row.upper is not None
    return paren(minus(paren(row.upper), "1")) if row.cond_op == "<" else paren(row.upper)


def rest_iterations(lp: Loop) -> str | None:
    """The iterations `lp` runs after the current one, from its own bound, when the
    bound can be evaluated again in the body; None otherwise."""
    if not lp.bound_runtime or lp.upper is None or not lp.step:
        return None
    v, b = cast(UMAX, lp.var), cast(UMAX, lp.upper)
    left = paren(minus(b, v) if lp.step > 0 else minus(v, b))
    if lp.cond_op in ("<", ">"):
        left = paren(minus(left, "1"))
    return paren(divide(left, cast_atom(UMAX, str(abs(lp.step)))))


def iterations(v: Loop) -> str:
    """The iterations of `v` after its first (0 when it runs none) in uintptr_t, from
    bounds on invariant variables evaluated as signed values at nest entry."""
    lo, hi = signed(v.lower_sym), signed(v.upper_sym)
    assert v.step is not None
    if v.step > 0:
        first, last = lo, hi if v.cond_op == "<=" else paren(minus(hi, "1"))
    else:
        first, last = lo, hi if v.cond_op == ">=" else paren(plus(hi, "1"))
        first, last = last, first
    span = last if first == cast_atom(IMAX, "0") else paren(minus(last, first))
    if abs(v.step) != 1:
        span = divide(span, str(abs(v.step)))
    return cond(cmp(last, ">=", first), cast(U, span), literal(0))


def move_holds(move: Move, block: int) -> str:
    """Whether all iterations of the move's loop step the address by less than a block
    in total, |coeff · step| · trip < block, written so that nothing overflows."""
    v = move.loop
    assert v.step is not None
    c = sym_value(move.coeff)
    if c is not None:
        a = wrapped_abs(c * v.step)
        if a == 0 or (block - 1) // a == 0:   # never / always a block or more
            return "1" if a == 0 else "0"
        return cmp(iterations(v), "<", literal((block - 1) // a))
    a = abs_sym(move.coeff, v.step)
    return paren(any_of(cmp(a, "==", "0"),
                        cmp(iterations(v), "<", divide(paren(minus(literal(block), "1")), a))))


def version(moves: tuple[Move, ...], block: int) -> str:
    """How many of `moves` hold in a row, innermost first: the candidate pipelining loop
    the nest takes (plan.Version)."""
    out = str(len(moves))
    for taken in reversed(range(len(moves))):
        out = cond(move_holds(moves[taken], block), out, str(taken))
    return out
