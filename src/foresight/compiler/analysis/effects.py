"""What a function writes, and so what is invariant in a loop nest of it.

One walk over the function's cursors records where each variable is written, which
variables have their address taken, where calls and synchronisation points are
(frontend/sync.py: another thread may change a global there) and where stores go
through memory.  The front end asks it whether a variable is invariant in a nest.
"""

from __future__ import annotations

import clang.cindex as ci

from foresight.compiler.frontend.cshim import binary_operator, unary_operator
from foresight.compiler.frontend.cursors import (
    children,
    decl_key,
    mark_variable,
    preorder,
    runs_cleanup,
    start_of,
    strip,
)
from foresight.compiler.frontend.sync import SyncPoints

K = ci.CursorKind


def _placed(fn: ci.Cursor, main: str):
    """The cursors of `fn` in preorder, each with its offset in the main file: a cursor
    from an #include'd file inside the body (whose offsets index that file) is placed
    where its nearest ancestor in the main file starts.  (Asking each cursor its file
    costs the front end a tenth: Effects does it only for a function whose text may
    #include something.)"""
    stack = [(fn, start_of(fn))]
    while stack:
        c, outer = stack.pop()
        start = c.extent.start
        at = start.offset if start.file is not None and start.file.name == main else outer
        stack.extend((k, at) for k in reversed(children(c)))
        yield c, at


class Effects:
    def __init__(self, fn: ci.Cursor, sync: SyncPoints, main: str, includes: bool = True):
        # Offsets and descriptions of the points where the function may synchronise with
        # other threads (frontend/sync.py): no hint load is moved across them.
        self.syncs: list[tuple[int, str]] = []
        # Where each variable is written (offsets of the writing expressions): a variable
        # is invariant in a nest that contains none of its writes.
        self.writes: dict[tuple, list[int]] = {}
        self.address_taken: set[tuple] = set()
        self.calls: list[int] = []              # offsets of calls (a call may write a global)
        # Offsets of writes of a pointer through memory (A[i] = ..., p->q = ...): any of them
        # might change a base read from memory.
        self.pointer_stores: list[int] = []
        self.member_writes: dict[str, list[int]] = {}   # member name -> offsets of its writes
        # Offsets and value type kinds of every store through memory (a[i] = ..., p->x += ...).
        self.memory_stores: list[tuple[int, ci.TypeKind]] = []
        for c, at in _placed(fn, main) if includes else (
                (c, start_of(c)) for c in preorder(fn)):
            written: set[tuple] = set()
            target = None
            if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
                op = binary_operator(c)
                if op.endswith("=") and op not in ("==", "!=", "<=", ">="):
                    target = children(c)[0]
            elif c.kind == K.UNARY_OPERATOR:
                op = unary_operator(c)
                kids = children(c)
                if op in ("post++", "post--", "pre++", "pre--") and kids:
                    target = kids[0]
                elif op == "&" and kids:
                    mark_variable(kids[0], self.address_taken)
            elif c.kind == K.CALL_EXPR or runs_cleanup(c):
                self.calls.append(at)   # a cleanup attribute calls at the scope's end
            why = sync.point(c)
            if why is not None:
                # Another thread may change a global here, as a call may.
                self.syncs.append((at, f"line {c.location.line}: {why}"))
                self.calls.append(at)
            if target is not None:
                mark_variable(target, written)
                t = strip(target)
                if t.kind == K.MEMBER_REF_EXPR:
                    self.member_writes.setdefault(t.spelling, []).append(at)
                if t.kind != K.DECL_REF_EXPR and t.type.get_canonical().kind == ci.TypeKind.POINTER:
                    self.pointer_stores.append(at)
                if t.kind != K.DECL_REF_EXPR:
                    self.memory_stores.append((at, t.type.get_canonical().kind))
            for key in written:
                self.writes.setdefault(key, []).append(at)

    def invariant(self, decl: ci.Cursor, nest_start: int, nest_end: int,
                  member: ci.Type | None = None) -> bool:
        """A variable whose value cannot change while the nest [nest_start, nest_end) runs
        (with `member`, the type of the member `decl.m` read: only that member's value)."""
        if decl.kind not in (K.VAR_DECL, K.PARM_DECL):
            return False
        if decl.type.is_volatile_qualified() or decl.type.get_canonical().kind.name == "ATOMIC":
            return False
        key = decl_key(decl)
        if any(nest_start <= w < nest_end for w in self.writes.get(key, ())):
            return False
        local = decl.semantic_parent is not None and decl.semantic_parent.kind == K.FUNCTION_DECL
        if decl.kind == K.PARM_DECL or (local and decl.storage_class != ci.StorageClass.STATIC):
            if decl.location.file is None or decl.location.offset >= nest_start:
                return False
            if key not in self.address_taken:
                return True
        # A global, a static, or a local whose address is taken: the nest neither writes
        # it (above) nor calls anything (a call may write it, and so may another thread
        # at a synchronisation point, counted as a call) nor stores through memory what
        # may be it (a pointer may point to it: a store of its kind of value, or of a
        # char, or any store for an aggregate; for a member read, of the member's kind).
        if any(nest_start <= o < nest_end for o in self.calls):
            return False
        kind = _alias_class((member if member is not None else decl.type).get_canonical().kind)
        return not any(nest_start <= o < nest_end and (
            kind is None or _alias_class(k) in (kind, None, "char"))
            for o, k in self.memory_stores)

    def sync_in(self, start: int, end: int) -> str | None:
        """The first synchronisation point in [start, end), described, or None."""
        return next((why for o, why in self.syncs if start <= o < end), None)


_CHARS = {ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.CHAR_S, ci.TypeKind.SCHAR}
_INTEGERS = {ci.TypeKind.BOOL, ci.TypeKind.USHORT, ci.TypeKind.UINT, ci.TypeKind.ULONG,
             ci.TypeKind.ULONGLONG, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
             ci.TypeKind.LONGLONG, ci.TypeKind.ENUM}
_FLOATS = {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE}


def _alias_class(kind: ci.TypeKind) -> str | None:
    """Which stores may change an object of this kind of type, coarsely: integers of any
    width and signedness together, floating types together, pointers together; chars
    may change anything; None for the rest (aggregates: any store may)."""
    if kind in _CHARS:
        return "char"
    if kind in _INTEGERS:
        return "int"
    if kind in _FLOATS:
        return "float"
    if kind == ci.TypeKind.POINTER:
        return "pointer"
    return None
