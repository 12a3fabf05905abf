"""What an expression's value is while a nest runs: fixed (the nest and nothing it calls
can change it), a constant, or affine in the enclosing loop variables with invariant
symbolic terms.  The writes, calls and synchronisation it relies on are facts of
analysis/effects.py."""

from __future__ import annotations

import clang.cindex as ci

from foresight.compiler.analysis.effects import Effects
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
from foresight.compiler.ir import Affine, sym_atom, sym_const

K = ci.CursorKind


class Values:
    """Value queries inside the nests of function `fn` (nest_end: each nest's start
    offset -> its end, filled in as nests are found)."""

    def __init__(self, fn: ci.Cursor, data: bytes, effects: Effects):
        self.fn, self.data, self.effects = fn, data, effects
        self.nest_end: dict[int, int] = {}
        self.expanding: set[tuple] = set()      # locals being replaced by their initializer
        self._constant_stores: dict[tuple[int, tuple], tuple[int, int, int]] | None = None

    def invariant_var(self, decl: ci.Cursor, nest_start: int) -> bool:
        """A variable whose value cannot change while the nest runs."""
        return self.effects.invariant(decl, nest_start,
                                      self.nest_end.get(nest_start, len(self.data)))

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
        return self.affine_operator(c, loops, nest_start)

    def assigned_constant(self, d: ci.Cursor, at: int, nest_start: int) -> int | None:
        """The value of local `d` at offset `at` in the nest, when every write of it in
        the nest is `d = C;` with one constant C and one of them comes before `at` in a
        block enclosing it (`i = 1; for (m = 0; m < 5; m++) rhs[k][j][i][m]`): then
        every path to `at` passes that write, and only those writes follow it (the
        variable is local and its address never taken).  A block with a label or a
        `case` may be entered past the write: none then."""
        if d.kind != K.VAR_DECL or d.type.is_volatile_qualified() or \
                d.storage_class == ci.StorageClass.STATIC or d.semantic_parent is None or \
                d.semantic_parent.kind != K.FUNCTION_DECL:
            return None
        key = decl_key(d)
        if key in self.effects.address_taken:
            return None
        nest_end = self.nest_end.get(nest_start, len(self.data))
        writes = {w for w in self.effects.writes.get(key, ()) if nest_start <= w < nest_end}
        stores = self.constant_stores()
        values = {stores.get((w, key), (None,))[0] for w in writes}
        if not writes or len(values) != 1 or None in values:
            return None
        for w in writes:
            _, end, block_end = stores[(w, key)]
            if end <= at < block_end:
                return _converted(values.pop(), d.type.get_canonical())
        return None

    def constant_stores(self) -> dict[tuple[int, tuple], tuple[int, int, int]]:
        """(offset, variable) -> (C, end, block end) for each statement `v = C;` directly
        in a block of the function with no label or case in it."""
        if self._constant_stores is None:
            self._constant_stores = {}
            for b in preorder(self.fn):
                if b.kind != K.COMPOUND_STMT or any(
                        k.kind in (K.LABEL_STMT, K.CASE_STMT, K.DEFAULT_STMT)
                        for k in preorder(b)):
                    continue
                for st in children(b):
                    if st.kind != K.BINARY_OPERATOR or binary_operator(st) != "=":
                        continue
                    lhs, rhs = (strip(k) for k in children(st))
                    value = evaluate_int(rhs)
                    if lhs.kind == K.DECL_REF_EXPR and lhs.referenced is not None and \
                            value is not None:
                        self._constant_stores[(start_of(st),
                                               decl_key(lhs.referenced))] = (
                            value, end_of(st), end_of(b))
        return self._constant_stores

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
            kids = list(children(c))
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
            kids = list(children(c))
            a = self.affine(kids[0], loops, nest_start) if kids else None
            if a is None:
                return None
            if op == "-":
                return a.scaled(sym_const(-1))
            if op == "+":
                return a
        return None


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
