"""What an expression's value is while a nest runs: fixed (the nest and nothing it calls
can change it), a constant, or affine in the enclosing loop variables with invariant
symbolic terms.  The writes, calls and synchronisation it relies on are facts of
analysis/effects.py."""

from __future__ import annotations

import clang.cindex as ci

from foresight.compiler.analysis.effects import Effects, member_class
from foresight.compiler.frontend.cshim import binary_operator, evaluate_int, unary_operator
from foresight.compiler.frontend.cursors import (
    INT_KINDS,
    children,
    decl_key,
    end_of,
    is_unsigned,
    preorder,
    start_of,
    strip,
)
from foresight.compiler.ir import Affine, sym_atom, sym_const, sym_value

K = ci.CursorKind


class Values:
    """Value queries inside the nests of function `fn` (nest_end: each nest's start
    offset -> its end, filled in as nests are found)."""

    def __init__(self, fn: ci.Cursor, data: bytes, effects: Effects):
        self.fn, self.data, self.effects = fn, data, effects
        self.nest_end: dict[int, int] = {}
        self.expanding: set[tuple] = set()      # locals being replaced by their initializer
        self._stores: dict[tuple[int, tuple], tuple[ci.Cursor, int, int]] | None = None

    def invariant_var(self, decl: ci.Cursor, nest_start: int,
                      member: ci.Type | None = None) -> bool:
        """A variable (with `member`, the member of that type read from it) whose value
        cannot change while the nest runs."""
        return self.effects.invariant(decl, nest_start,
                                      self.nest_end.get(nest_start, len(self.data)), member)

    def sync_in(self, nest_start: int) -> str | None:
        """The first point in the nest where it may synchronise with other threads."""
        return self.effects.sync_in(nest_start, self.nest_end.get(nest_start, len(self.data)))

    def plain_in(self, expr: ci.Cursor, body: ci.Cursor) -> bool:
        """`expr` can be evaluated again at any iteration of the loop with `body` and
        gives the loop's own value: integer arithmetic on non-volatile local variables
        and parameters whose address is not taken and which the body does not write, on
        globals and statics nothing in the body may change (analysis/effects.py), and
        on members of them (`g->m`, `s.n`) that the body does not assign."""
        used: set[tuple] = set()
        lo, hi = start_of(body), end_of(body)
        for d in preorder(expr):
            if d.kind == K.MEMBER_REF_EXPR:
                writes = self.effects.member_writes.get(d.spelling, ())
                if d.type.is_volatile_qualified() or any(lo <= w < hi for w in writes):
                    return False
            elif d.kind == K.DECL_REF_EXPR:
                r = d.referenced
                if r is None or r.kind not in (K.VAR_DECL, K.PARM_DECL):
                    return False
                local = r.semantic_parent is not None and \
                    r.semantic_parent.kind == K.FUNCTION_DECL
                if r.type.is_volatile_qualified():
                    return False
                if not local or r.storage_class == ci.StorageClass.STATIC:
                    # A global or static: when nothing in the body may change it.
                    if not self.effects.invariant(r, lo, hi):
                        return False
                    continue
                used.add(decl_key(r))
            elif d.kind in (K.BINARY_OPERATOR, K.UNARY_OPERATOR, K.PAREN_EXPR,
                            K.INTEGER_LITERAL, K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR):
                if d.kind == K.UNARY_OPERATOR and unary_operator(d) not in ("-", "+", "~"):
                    return False
                if d.kind == K.BINARY_OPERATOR and binary_operator(d).endswith("=") and \
                        binary_operator(d) not in ("==", "!=", "<=", ">="):
                    return False
            elif d.kind != K.TYPE_REF:
                return False
        if used & self.effects.address_taken:
            return False
        return not any(lo <= w < hi for key in used for w in self.effects.writes.get(key, ()))

    def kept_in(self, expr: ci.Cursor, body: ci.Cursor) -> bool:
        """`expr` (already plain_in the loop with `body`) keeps its value while the body
        runs: plain_in answers for its variables; a member it reads (`rec->n`) may be
        reached through a pointer, so no call and no store through memory in the body
        may change a value of its type (Effects.memory_kept)."""
        lo, hi = start_of(body), end_of(body)
        return all(self.effects.memory_kept(member_class(d), lo, hi)
                   for d in preorder(expr) if d.kind == K.MEMBER_REF_EXPR)

    def fixed_in_nest(self, expr: ci.Cursor, nest_start: int) -> bool:
        """`expr` (already plain_in its loop) reads only invariant variables of the nest
        and members of them that the nest never assigns."""
        lo, hi = nest_start, self.nest_end.get(nest_start, len(self.data))
        for d in preorder(expr):
            if d.kind == K.DECL_REF_EXPR and (d.referenced is None
                                              or not self.invariant_var(d.referenced,
                                                                        nest_start)):
                return False
            if d.kind == K.MEMBER_REF_EXPR and any(
                    lo <= w < hi for w in self.effects.member_writes.get(d.spelling, ())):
                return False
        return True

    def affine(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int) -> Affine | None:
        """`c` as an affine function of the loop variables with invariant symbolic terms."""
        c = strip(c)
        if c.kind == K.CSTYLE_CAST_EXPR:
            if c.type.get_canonical().kind not in INT_KINDS:
                return None
            kids = [k for k in children(c) if k.kind.is_expression()]
            return self.affine(kids[-1], loops, nest_start) if kids else None
        if c.type.get_canonical().kind not in INT_KINDS:
            return None
        v = evaluate_int(c)
        if v is not None:
            return Affine({}, sym_const(v))
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
            key = decl_key(c.referenced)
            if key in loops:
                return Affine({loops[key]: sym_const(1)}, {})
            if self.invariant_var(c.referenced, nest_start):
                return Affine({}, sym_atom(c.referenced.spelling))
            value = self.assigned_constant(c.referenced, start_of(c), nest_start)
            if value is not None:
                return Affine({}, sym_const(value))
            return self.local_definition(c.referenced, loops, nest_start)
        return _wrapping(c, self.affine_operator(c, loops, nest_start))

    def assigned_constant(self, d: ci.Cursor, at: int, nest_start: int) -> int | None:
        """The value of local `d` at offset `at` in the nest, when every write of it in
        the nest is `d = C;` with one constant C and one of them comes before `at` in a
        block enclosing it (`i = 1; for (m = 0; m < 5; m++) rhs[k][j][i][m]`): then
        every path to `at` passes that write, and only those writes follow it (the
        variable is local and its address never taken).  A block with a label or a
        `case` may be entered past the write: none then."""
        writes = self._local_writes(d, nest_start)
        if not writes:
            return None
        key, stores = decl_key(d), self.stores()
        values = {evaluate_int(stores[(w, key)][0]) if (w, key) in stores else None
                  for w in writes}
        if len(values) != 1 or None in values:
            return None
        for w in writes:
            _, end, block_end = stores[(w, key)]
            if end <= at < block_end:
                return _converted(values.pop(), d.type.get_canonical())
        return None

    def held_element(self, c: ci.Cursor, nest_start: int) -> ci.Cursor | None:
        """The array element a local integer holds where `c` (a use of it) reads it, so
        that `x[j]` is the indirect `x[order[b]]`: `int j = order[b];` declared in the
        nest and never written, or `j = order[b];` its only write in the nest, directly
        in a block enclosing `c` and before it (as assigned_constant).  The variable
        must hold every value of the element's type (as wide, and as signed when as
        wide), or the element is not its value."""
        d = c.referenced
        if d is None or not self.plain_local(d):
            return None
        key = decl_key(d)
        nest_end = self.nest_end.get(nest_start, len(self.data))
        if nest_start <= d.location.offset < nest_end and key not in self.effects.writes:
            init = [k for k in children(d) if k.kind.is_expression()]
            rhs = strip(init[0]) if len(init) == 1 else None
        else:
            writes = self._local_writes(d, nest_start)
            found = self.stores().get((min(writes), key)) if len(writes) == 1 else None
            if found is None or not found[1] <= start_of(c) < found[2]:
                return None
            rhs = strip(found[0])
        if rhs is None or rhs.kind != K.ARRAY_SUBSCRIPT_EXPR:
            return None
        held, elem = d.type.get_canonical(), rhs.type.get_canonical()
        if held.kind not in INT_KINDS or elem.kind not in INT_KINDS or \
                held.get_size() < elem.get_size() or (
                    held.get_size() == elem.get_size() and is_unsigned(held) != is_unsigned(elem)):
            return None
        return rhs

    def plain_local(self, d: ci.Cursor) -> bool:
        """`d` is a non-volatile, non-static local variable whose address is not taken."""
        return (d.kind == K.VAR_DECL and not d.type.is_volatile_qualified()
                and d.storage_class != ci.StorageClass.STATIC and d.semantic_parent is not None
                and d.semantic_parent.kind == K.FUNCTION_DECL
                and decl_key(d) not in self.effects.address_taken)

    def _local_writes(self, d: ci.Cursor, nest_start: int) -> set[int]:
        """The offsets of the writes of plain local `d` in the nest (empty for others)."""
        if not self.plain_local(d):
            return set()
        nest_end = self.nest_end.get(nest_start, len(self.data))
        return {w for w in self.effects.writes.get(decl_key(d), ()) if nest_start <= w < nest_end}

    def stores(self) -> dict[tuple[int, tuple], tuple[ci.Cursor, int, int]]:
        """(offset, variable) -> (value, end, block end) for each statement `v = value;`
        directly in a block of the function with no label or case in it."""
        if self._stores is None:
            self._stores = {}
            for b in preorder(self.fn):
                if b.kind != K.COMPOUND_STMT or any(
                        k.kind in (K.LABEL_STMT, K.CASE_STMT, K.DEFAULT_STMT)
                        for k in preorder(b)):
                    continue
                for st in children(b):
                    if st.kind != K.BINARY_OPERATOR or binary_operator(st) != "=":
                        continue
                    lhs, rhs = (strip(k) for k in children(st))
                    if lhs.kind == K.DECL_REF_EXPR and lhs.referenced is not None:
                        self._stores[(start_of(st), decl_key(lhs.referenced))] = (
                            rhs, end_of(st), end_of(b))
        return self._stores

    def local_definition(self, d: ci.Cursor, loops: dict[tuple, str],
                         nest_start: int) -> Affine | None:
        """A local declared inside the nest and never written after its initializer
        (`long start = i * (m + 1);`) stands for its initializer, when that is affine:
        it is recomputed from the enclosing loop variables each time its block runs."""
        if d.kind != K.VAR_DECL or d.location.file is None:
            return None
        if d.type.is_volatile_qualified() or d.storage_class == ci.StorageClass.STATIC:
            return None
        nest_end = self.nest_end.get(nest_start, len(self.data))
        if not nest_start <= d.location.offset < nest_end:
            return None
        key = decl_key(d)
        if key in self.effects.writes or key in self.effects.address_taken or key in self.expanding:
            return None
        init = [k for k in children(d) if k.kind.is_expression()]
        if len(init) != 1:
            return None
        self.expanding.add(key)
        try:
            return self.affine(init[0], loops, nest_start)
        finally:
            self.expanding.discard(key)

    def affine_operator(self, c: ci.Cursor, loops: dict[tuple, str],
                        nest_start: int) -> Affine | None:
        """`c`, an arithmetic operator, as an affine function (None if it is not one)."""
        if c.kind == K.BINARY_OPERATOR:
            op = binary_operator(c)
            kids = children(c)
            a = self.affine(kids[0], loops, nest_start)
            b = self.affine(kids[1], loops, nest_start)
            if a is None or b is None:
                return None
            if op == "+":
                return a.plus(b)
            if op == "-":
                return a.plus(b, -1)
            if op == "*":
                if not a.coeffs:
                    return b.scaled(a.const)
                if not b.coeffs:
                    return a.scaled(b.const)
            return None
        if c.kind == K.UNARY_OPERATOR:
            op = unary_operator(c)
            kids = children(c)
            a = self.affine(kids[0], loops, nest_start) if kids else None
            if a is None:
                return None
            if op == "-":
                return a.scaled(sym_const(-1))
            if op == "+":
                return a
        return None


# The largest constant term an unsigned operation narrower than uintptr_t may add to loop
# variables and still be taken as not wrapping (`i + 1`, `2 * i - 3`).
_SMALL = 1 << 20


def _wrapping(c: ci.Cursor, aff: Affine | None) -> Affine | None:
    """`aff`, the value of operator `c`, as C computes it: an unsigned type narrower than
    uintptr_t wraps (`base + len` in uint32_t may be 64 where the sum of the two is not),
    which the affine form, summed in uintptr_t, does not.  Without loop variables: one
    symbol, the sum in uintptr_t cut to the type (exact: both wrap modulo a power of
    two).  With them: kept only as loop variables with constant coefficients plus a
    small constant (a loop variable stays inside its bounds); else not affine."""
    if aff is None:
        return None
    t = c.type.get_canonical()
    if not is_unsigned(t) or t.get_size() >= 8 or t.get_size() <= 0:
        return aff
    if not aff.coeffs:
        from foresight.compiler.rewrite.cexpr import sym
        return Affine({}, sym_atom(f"({t.spelling})({sym(aff.const)})"))
    small = sym_value(aff.const)
    if small is None or abs(small) >= _SMALL:
        return None
    if any(sym_value(k) is None or abs(sym_value(k)) >= _SMALL for k in aff.coeffs.values()):
        return None
    return aff


def _converted(value: int, t: ci.Type) -> int | None:
    """`value` stored into an integer variable of type `t` (None for other types)."""
    if t.kind == ci.TypeKind.BOOL:
        return int(value != 0)
    if t.kind not in INT_KINDS or t.get_size() <= 0:
        return None
    bits = 8 * t.get_size()
    value %= 1 << bits
    if not is_unsigned(t) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value
