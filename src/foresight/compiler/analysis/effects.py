"""What a function writes, and so what is invariant in a loop nest of it.

One walk over the function's cursors records where each variable is written, which
variables have their address taken, where calls and synchronisation points are
(frontend/sync.py: another thread may change a global there) and where stores go
through memory.  The front end asks it whether a variable is invariant in a nest.

Two facts about the whole translation unit (UnitEffects) sharpen it: a call of a
function that writes nothing its caller can see (a helper that only computes, defined
in the file, or a C library function such as `sqrt`) is no call here, and a store to
an element of a *private array* (a `static` or local array whose address never leaves
a chain of subscripts, so no pointer can point into it) changes only that array.
"""

from __future__ import annotations

import clang.cindex as ci

from foresight.compiler.frontend.cshim import binary_operator, unary_operator
from foresight.compiler.frontend.cursors import (
    ARRAY_KINDS,
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
    def __init__(self, fn: ci.Cursor, sync: SyncPoints, main: str, includes: bool = True,
                 unit: UnitEffects | None = None):
        # Offsets and descriptions of the points where the function may synchronise with
        # other threads (frontend/sync.py): no hint load is moved across them.
        self.syncs: list[tuple[int, str]] = []
        self.unit = unit
        # Where each variable is written (offsets of the writing expressions): a variable
        # is invariant in a nest that contains none of its writes.
        self.writes: dict[tuple, list[int]] = {}
        self.address_taken: set[tuple] = set()
        self.calls: list[int] = []              # offsets of calls (a call may write a global)
        # Offsets of writes of a pointer through memory (A[i] = ..., p->q = ...): any of them
        # might change a base read from memory.
        self.pointer_stores: list[int] = []
        self.member_writes: dict[str, list[int]] = {}   # member name -> offsets of its writes
        # Offsets and value type kinds of every store through memory (a[i] = ..., p->x += ...),
        # with the private array stored to (UnitEffects.private_array), else None.
        self.memory_stores: list[tuple[int, ci.TypeKind, tuple | None]] = []
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
            elif (c.kind == K.CALL_EXPR and not (unit and unit.writes_nothing(c))) \
                    or runs_cleanup(c):
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
                    self.memory_stores.append((at, t.type.get_canonical().kind,
                                               unit.stored_array(t) if unit else None))
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
        return self.memory_kept(member if member is not None else decl.type,
                                nest_start, nest_end, key)

    def memory_kept(self, t: ci.Type, start: int, end: int, key: tuple | None = None) -> bool:
        """No call and no store through memory in [start, end) may change an object of
        type `t` (other than variable `key` itself, whose own writes the caller checks):
        stores of another kind of value leave it alone (C's aliasing rules; chars may
        change anything, anything may change an aggregate), and so do stores to a
        private array that is not `key`."""
        if any(start <= o < end for o in self.calls):
            return False
        kind = _alias_class(t.get_canonical().kind)
        return not any(start <= o < end and (array is None or array == key)
                       and (kind is None or _alias_class(k) in (kind, None, "char"))
                       for o, k, array in self.memory_stores)

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


# C library functions that write no memory of the caller's (errno aside, which no
# expression the front end evaluates again can read: it is a call).
_NO_WRITES = {
    "sqrt", "sqrtf", "sqrtl", "cbrt", "exp", "expf", "exp2", "expm1", "log", "logf", "log2",
    "log10", "log1p", "pow", "powf", "sin", "sinf", "cos", "cosf", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "fabs", "fabsf", "fabsl", "floor", "floorf",
    "ceil", "ceilf", "round", "lround", "trunc", "fmod", "fmin", "fmax", "fma", "hypot",
    "copysign", "ldexp", "erf", "erfc", "nearbyint", "rint", "lrint", "abs", "labs", "llabs",
    "memcmp", "memchr", "strlen", "strcmp", "strncmp", "strchr", "strrchr", "strstr",
    "__builtin_expect", "__builtin_expect_with_probability", "__builtin_constant_p",
}


class UnitEffects:
    """Facts about the functions and arrays of one translation unit (`top`: its cursor's
    children), asked by each function's Effects."""

    def __init__(self, top: tuple[ci.Cursor, ...], sync: SyncPoints):
        self.top, self.sync = top, sync
        self.definitions = {fn.get_usr(): fn for fn in top
                            if fn.kind == K.FUNCTION_DECL and fn.is_definition()}
        self._quiet: dict[str, bool] = {}
        self._escaping: set[tuple] | None = None

    def writes_nothing(self, call: ci.Cursor) -> bool:
        """Whether call `call` can change no object its caller can reach: a call of a
        function of this file that stores nothing through memory, writes no global or
        static variable, does not synchronise and calls only such functions (itself
        included), or of a C library function known to compute only (_NO_WRITES)."""
        callee = call.referenced
        if callee is None or callee.kind != K.FUNCTION_DECL:
            return False
        usr = callee.get_usr()
        if usr in self.definitions:
            return self._writes_nothing(usr)
        name = callee.spelling
        return name in _NO_WRITES or (name.startswith("__builtin_")
                                      and name[len("__builtin_"):] in _NO_WRITES)

    def _writes_nothing(self, usr: str) -> bool:
        if usr in self._quiet:
            return self._quiet[usr]
        self._quiet[usr] = True     # recursion: assume so while looking
        fn = self.definitions[usr]
        quiet = self.sync.function(usr) is None and all(_local_only(c, self) for c in preorder(fn)
                                                         if c is not fn)
        self._quiet[usr] = quiet
        return quiet

    def private_array(self, decl: ci.Cursor) -> bool:
        """Whether `decl` declares an array no pointer can point into: a local or
        file-scope `static` array, not volatile, whose every use in the file is the
        base of a chain of subscripts down to an element that is not itself an
        array, or the operand of sizeof (never decayed to a pointer, never `&`)."""
        if decl.kind != K.VAR_DECL or decl.type.is_volatile_qualified() or \
                decl.type.get_canonical().kind not in ARRAY_KINDS:
            return False
        parent = decl.semantic_parent
        local = parent is not None and parent.kind == K.FUNCTION_DECL
        if not local and decl.storage_class != ci.StorageClass.STATIC:
            return False    # another file may take its address
        if local and decl.storage_class == ci.StorageClass.EXTERN:
            return False
        if self._escaping is None:
            self._escaping = _escaping_arrays(self.top)
        return decl_key(decl) not in self._escaping

    def stored_array(self, target: ci.Cursor) -> tuple | None:
        """The private array an element of which store target `target` is (`h[c][b]`
        of a private `h`), as decl_key; None for any other target."""
        c = strip(target)
        if c.kind != K.ARRAY_SUBSCRIPT_EXPR:
            return None
        while c.kind == K.ARRAY_SUBSCRIPT_EXPR:
            kids = children(c)
            if len(kids) != 2:
                return None
            c = strip(kids[0])
        if c.kind != K.DECL_REF_EXPR or c.referenced is None:
            return None
        return decl_key(c.referenced) if self.private_array(c.referenced) else None


def _local_only(c: ci.Cursor, unit: UnitEffects) -> bool:
    """Whether cursor `c` of a function's body changes nothing but the function's own
    automatic variables (no store through memory, no global or static written, no call
    that may write, no nested function, no cleanup call)."""
    if c.kind == K.CALL_EXPR:
        return unit.writes_nothing(c)
    if (c.kind == K.FUNCTION_DECL and c.is_definition()) or runs_cleanup(c):
        return False
    target = None
    if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
        op = binary_operator(c)
        if op.endswith("=") and op not in ("==", "!=", "<=", ">="):
            target = children(c)[0]
    elif c.kind == K.UNARY_OPERATOR and unary_operator(c) in ("post++", "post--", "pre++",
                                                              "pre--"):
        target = children(c)[0]
    if target is None:
        return True
    t = strip(target)
    if t.kind != K.DECL_REF_EXPR or t.referenced is None:
        return False
    d = t.referenced
    return d.kind == K.PARM_DECL or (
        d.kind == K.VAR_DECL and d.semantic_parent is not None
        and d.semantic_parent.kind == K.FUNCTION_DECL
        and d.storage_class not in (ci.StorageClass.STATIC, ci.StorageClass.EXTERN))


def _escaping_arrays(top: tuple[ci.Cursor, ...]) -> set[tuple]:
    """decl_keys of the arrays some use in these cursors may make a pointer into:
    decayed to a pointer (passed, assigned, added to, dereferenced), or `&` of it or of
    part of it.  Uses as the base of subscripts down to an element that is not an array,
    and operands of sizeof, are not."""
    out: set[tuple] = set()
    stack = [(c, "value") for c in top
             if c.kind in (K.FUNCTION_DECL, K.VAR_DECL) and children(c)]
    while stack:
        c, role = stack.pop()
        k = c.kind
        if k == K.DECL_REF_EXPR:
            r = c.referenced
            if role != "chain" and r is not None and r.kind == K.VAR_DECL and \
                    r.type.get_canonical().kind in ARRAY_KINDS:
                out.add(decl_key(r))
            continue
        kids = children(c)
        if k == K.ARRAY_SUBSCRIPT_EXPR and len(kids) == 2:
            whole = c.type.get_canonical().kind in ARRAY_KINDS
            # An element that is an array is itself used as the subscript is.
            base = "addr" if role == "addr" or (whole and role != "chain") else "chain"
            stack += [(kids[0], base), (kids[1], "value")]
        elif k in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and len(kids) == 1:
            stack.append((kids[0], role))       # an implicit conversion or parentheses
        elif k == K.UNARY_OPERATOR and unary_operator(c) == "&":
            stack += [(d, "addr") for d in kids]
        elif k == K.CXX_UNARY_EXPR:             # sizeof, _Alignof: no value is made
            stack += [(d, "chain") for d in kids]
        else:
            stack += [(d, "value") for d in kids]
    return out
