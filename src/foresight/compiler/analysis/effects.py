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

import re
from collections import Counter

import clang.cindex as ci

from foresight.compiler.frontend.cshim import binary_operator, file_offset, unary_operator
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
from foresight.compiler.frontend.sync import MATH_CALLS, CalleeFacts, SyncPoints

K = ci.CursorKind

# Calls gcc refuses to inline a function for ("it uses setjmp"), or whose meaning
# inlining changes (an `alloca` in a loop's inlined body is freed only when the caller
# returns; gcc never inlines such a function unless forced).
_NOT_INLINED = {"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "savectx",
                "vfork", "getcontext", "__builtin_setjmp", "__builtin_longjmp",
                "__builtin_apply", "__builtin_apply_args", "__builtin_return", "alloca",
                "__builtin_alloca", "__builtin_alloca_with_align",
                "__builtin_alloca_with_align_and_max", "__builtin_eh_return",
                "__builtin_unwind_init", "__builtin_va_arg_pack"}
# The most bytes of automatic variables and compound literals a function forced inline
# may have: gcc's own limit for a function called once (--param large-stack-frame): past
# it gcc keeps the function out of line, and forced in, each inlined copy may keep its
# own frame in the caller's (a recursive caller then overflows the stack where the
# original did not).
_FRAME_BYTES = 256


# Comments, and the literals a comment marker inside them must not start one in.
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def _returns_twice(call: ci.Cursor) -> bool:
    """Whether `call` calls a function declared `returns_twice` (gcc then refuses to
    inline the caller)."""
    callee = call.referenced
    if callee is None:
        return False
    return any("returns_twice" in t.spelling for d in (callee, callee.canonical)
               for t in d.get_tokens())


# The most tokens a function forced inline may have with the functions of the file it
# calls (which gcc may inline into it), its outermost for-loops counted twice (as
# hinted nests they get an unhinted copy): each is compiled once more.  Forced, NAS
# SP's solvers (about 760 each so counted) took gcc 1.0 s more (1.5 -> 2.4 s), BT's
# 0.75 s, and neither ran faster; a particle pusher's three steps (200-360) gained 12%.
_INLINE_TOKENS = 600


def _compiled_tokens(fn: ci.Cursor) -> int:
    """Tokens of definition `fn`, those of its outermost for-loops twice."""
    def loops(c: ci.Cursor) -> int:
        if c.kind == K.FOR_STMT:
            return sum(1 for _ in c.get_tokens())
        return sum(loops(k) for k in children(c))
    return sum(1 for _ in fn.get_tokens()) + loops(fn)


def _placed(fn: ci.Cursor, main: str):
    """The cursors of `fn` in preorder, each with its offset in the main file: a cursor
    from an #include'd file inside the body (whose offsets index that file) is placed
    where its nearest ancestor in the main file starts.  (Asking each cursor its file
    costs the front end a tenth: Effects does it only for a function whose text may
    #include something.)"""
    stack = [(fn, start_of(fn))]
    while stack:
        c, outer = stack.pop()
        name, off = file_offset(c.extent.start)
        at = off if name == main else outer
        stack.extend((k, at) for k in reversed(children(c)))
        yield c, at


class Effects:
    def __init__(self, fn: ci.Cursor, unit: UnitEffects, main: str, includes: bool = True):
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
        # Offsets of every store that a pointer may see (a[i] = ..., p->x += ..., and a write
        # by name of a global, a static or a variable whose address is taken), with the
        # kind of object it may change (_alias_class; None: any, as a store to a union
        # member or of an aggregate, and every store without strict aliasing) and the one
        # object it is confined to, if known: ("private", array) for an element of a
        # private array (UnitEffects.private_array: no pointer reaches it), ("named",
        # variable) for a write of the variable by name.
        self.memory_stores: list[tuple[int, str | None, tuple | None]] = []
        named: list[tuple[int, str | None, tuple, bool]] = []
        sync = unit.sync
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
            elif (c.kind == K.CALL_EXPR and not unit.writes_nothing(c)) or runs_cleanup(c):
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
                cls = _alias_class(t.type.get_canonical().kind) \
                    if unit.strict_aliasing and not _through_union(t) \
                    and not _has_union(t.type) else None
                if t.kind != K.DECL_REF_EXPR:
                    array = unit.stored_array(t)
                    self.memory_stores.append((at, cls, ("private", array) if array else None))
                elif t.referenced is not None and t.referenced.kind in (K.VAR_DECL, K.PARM_DECL):
                    d = t.referenced
                    shared = d.kind == K.VAR_DECL and (
                        d.storage_class in (ci.StorageClass.STATIC, ci.StorageClass.EXTERN)
                        or d.semantic_parent is None
                        or d.semantic_parent.kind != K.FUNCTION_DECL)
                    named.append((at, cls, decl_key(d), shared))
            for key in written:
                self.writes.setdefault(key, []).append(at)
        # A global's or static's write by name, or one of a variable whose address is
        # taken, changes what a pointer to it reads.
        self.memory_stores += [(at, cls, ("named", key)) for at, cls, key, shared in named
                               if shared or key in self.address_taken]

    def invariant(self, decl: ci.Cursor, nest_start: int, nest_end: int,
                  member: ci.Type | None = None) -> bool:
        """A variable whose value cannot change while the nest [nest_start, nest_end) runs
        (with `member`, the type of the member `decl.m` read: only that member's value)."""
        if decl.kind not in (K.VAR_DECL, K.PARM_DECL):
            return False
        if decl.type.is_volatile_qualified() or decl.type.get_canonical().kind.name == "ATOMIC":
            return False
        if decl.spelling in self.unit.aliased():
            return False    # another name for the same object (alias attribute) is written
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
        kind = None if _has_union(decl.type) else _alias_class(
            (member if member is not None else decl.type).get_canonical().kind)
        return self.memory_kept(kind, nest_start, nest_end, key)

    def memory_kept(self, kind: str | None, start: int, end: int,
                    key: tuple | None = None) -> bool:
        """No call and no store through memory in [start, end) may change an object of
        alias class `kind` (_alias_class; None: any store may, as for an aggregate or a
        union member) other than variable `key` itself, whose own writes the caller
        checks: with strict aliasing, stores of another kind of value leave it alone
        (chars may change anything), and stores to a private array that is not `key`
        never reach it."""
        if any(start <= o < end for o in self.calls):
            return False
        return not any(start <= o < end and (kind is None or cls in (kind, None, "char"))
                       and not _elsewhere(confined, key)
                       for o, cls, confined in self.memory_stores)

    def stores_other_than_float(self, start: int, end: int) -> bool:
        """Whether a store in [start, end) may change something other than a floating
        value (an index array, say)."""
        return any(start <= o < end and cls != "float"
                   and not (confined and confined[0] == "named" and cls is not None)
                   for o, cls, confined in self.memory_stores)

    def sync_in(self, start: int, end: int) -> str | None:
        """The first synchronisation point in [start, end), described, or None."""
        return next((why for o, why in self.syncs if start <= o < end), None)


_CHARS = {ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.CHAR_S, ci.TypeKind.SCHAR}
_INTEGERS = {ci.TypeKind.BOOL, ci.TypeKind.USHORT, ci.TypeKind.UINT, ci.TypeKind.ULONG,
             ci.TypeKind.ULONGLONG, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
             ci.TypeKind.LONGLONG, ci.TypeKind.ENUM}
_FLOATS = {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE}


def _elsewhere(confined: tuple | None, key: tuple | None) -> bool:
    """Whether a store confined to `confined` (Effects.memory_stores) cannot change the
    object read: variable `key` read by name, or (key None) an object read through a
    pointer, which no pointer reaches in a private array."""
    if confined is None:
        return False
    kind, obj = confined
    if kind == "private":
        return obj != key
    return key is not None and obj != key


def member_class(member: ci.Cursor) -> str | None:
    """The alias class (_alias_class) of the member a member expression reads, None
    (any store may change it) when it is a union's or a union's is on its way."""
    c = member
    while c.kind == K.MEMBER_REF_EXPR:
        f = c.referenced
        if f is None or (f.semantic_parent is not None
                         and f.semantic_parent.kind == K.UNION_DECL):
            return None
        kids = children(c)
        if not kids:
            break
        c = strip(kids[0])
        while c.kind == K.ARRAY_SUBSCRIPT_EXPR and children(c):
            c = strip(children(c)[0])
    return _alias_class(member.type.get_canonical().kind)


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
_NO_WRITES = MATH_CALLS | {
    "abs", "labs", "llabs",
    "memcmp", "memchr", "strlen", "strcmp", "strncmp", "strchr", "strrchr", "strstr",
    "__builtin_expect", "__builtin_expect_with_probability", "__builtin_constant_p",
}


class UnitEffects:
    """Facts about the functions and arrays of one translation unit (`top`: its cursor's
    children; `data`: the main file's bytes), asked by each function's Effects, and
    what the C compiler is told it may assume (CompileOptions.strict_aliasing,
    own_definitions)."""

    def __init__(self, top: tuple[ci.Cursor, ...], sync: SyncPoints, data: bytes = b"",
                 strict_aliasing: bool = True, own_definitions: bool = True):
        self.top, self.sync = top, sync
        self.definitions = sync.definitions
        self.strict_aliasing, self.own_definitions = strict_aliasing, own_definitions
        self._writes = CalleeFacts(self.definitions, self._own_writes)
        self._escaping: set[tuple] | None = None
        self._aliased: set[str] | None = None
        self._references: Counter[str] | None = None   # function USR -> times named
        self.data = data
        self._code: bytes | None = None   # data without its comments (inline_point)
        # Per-function code generation options: a caller's and a callee's that differ
        # make forced inlining fail (`_Pragma("GCC target ...")` too).
        self._target_options = re.search(
            rb"[Pp]ragma\W+(GCC|clang)\s+(target|optimize|attribute|push_options)|"
            rb"\b(target|optimize|target_clones|__target__|__optimize__)\s*\(",
            data) is not None
        # `#pragma weak f`: f's definition here may be replaced at link time.
        self._weak = {m.decode("utf-8", "replace")
                      for m in re.findall(rb"#\s*pragma\s+weak\s+(\w+)", data)}

    def inline_point(self, fn: ci.Cursor | None, main: str) -> int | None:
        """Where `__attribute__((__always_inline__))` goes (the offset just after the
        `static` that begins its definition) so that the C compiler inlines `fn` at the two
        calls a nest and its unhinted copy make, as it inlined the one call of the
        original (gcc inlines a static function called once whatever its size, and not
        one called twice: a particle pusher's time step ran 11-14% slower in memory).

        None unless `fn` is a `static` function defined in the main file whose name the
        file's text holds only in its declarations and the one call (no other mention: a
        macro, a `cleanup` or `alias` attribute, a block-scope declaration), and forcing
        can change nothing but speed: not variadic, no attribute on any declaration,
        `static` written in the file (not by a macro), nothing gcc refuses to inline or
        that inlining changes (setjmp-like calls, `__builtin_longjmp`, computed gotos,
        nested functions, `alloca`, over _FRAME_BYTES of locals and literals), no `asm`
        (its labels would be defined twice) in it or in the file's
        functions it calls, none of which calls it back, all together under
        _INLINE_TOKENS, and no `target`/`optimize` option in the file.  What the text
        cannot show (an attribute from a header's macro) makes cc reject the text: the
        driver then compiles it without the forced inlines (Insertion.optional)."""
        if fn is None or fn.kind != K.FUNCTION_DECL or \
                fn.storage_class != ci.StorageClass.STATIC or self._target_options:
            return None
        usr = fn.get_usr()
        d = self.definitions.get(usr)
        if d is None or d.location.file is None or d.location.file.name != main or \
                d.type.kind == ci.TypeKind.FUNCTIONPROTO and d.type.is_function_variadic():
            return None
        if self._references is None:
            # Function bodies and file-scope initialisers (tables of function pointers).
            self._references = Counter()
            for top in (*self.definitions.values(),
                        *(t for t in self.top if t.kind == K.VAR_DECL)):
                for c in preorder(top):
                    if c.kind == K.DECL_REF_EXPR and c.referenced is not None and \
                            c.referenced.kind == K.FUNCTION_DECL:
                        self._references[c.referenced.get_usr()] += 1
        if self._references[usr] != 1:
            return None
        decls = [t for t in self.top if t.kind == K.FUNCTION_DECL and t.get_usr() == usr]
        if any(t.location.file is None or t.location.file.name != main for t in decls):
            return None
        if self._code is None:
            self._code = _COMMENT.sub(lambda m: m.group(0) if m.group(0)[:1] in b"\"'"
                                      else b" ", self.data)
        mentions = len(re.findall(rb"\b%s\b" % re.escape(fn.spelling.encode()), self._code))
        if mentions != len(decls) + 1:
            return None
        tokens = list(d.get_tokens())
        if not tokens or tokens[0].spelling != "static":
            return None
        at = tokens[0].extent.end.offset
        line_start = self.data.rfind(b"\n", 0, at) + 1
        if self.data[at - 6:at] != b"static" or \
                self.data[line_start:at].lstrip().startswith((b"#", b"%:")) or \
                not start_of(d) <= at - 6 < d.location.offset:
            return None     # `static` from a macro
        for decl in decls:
            head = []
            for t in decl.get_tokens():
                if t.spelling == "{":
                    break
                head.append(t.spelling)
            if any(w in ("__attribute__", "__attribute", "__declspec", "_Noreturn", "[")
                   for w in head) or any(k.kind.is_attribute() for k in children(decl)):
                return None
        frame = 0
        for c in preorder(d):
            if c.kind in (K.INDIRECT_GOTO_STMT, K.ADDR_LABEL_EXPR) or \
                    (c.kind == K.FUNCTION_DECL and c is not d and c.is_definition()):
                return None
            if (c.kind == K.VAR_DECL and c.storage_class != ci.StorageClass.STATIC) or \
                    c.kind == K.COMPOUND_LITERAL_EXPR:
                frame += max(c.type.get_size(), 0)
            if c.kind == K.CALL_EXPR and (c.spelling in _NOT_INLINED or _returns_twice(c)):
                return None
        if frame > _FRAME_BYTES:
            return None
        seen, todo, size = {usr}, [d], 0
        while todo:
            f = todo.pop()
            size += _compiled_tokens(f)
            if size > _INLINE_TOKENS:
                return None
            for c in preorder(f):
                if c.kind in (K.ASM_STMT, K.MS_ASM_STMT):
                    return None
                callee = c.referenced if c.kind == K.CALL_EXPR else None
                u = callee.get_usr() if callee is not None else None
                if u == usr:
                    return None     # recursion: gcc cannot inline a function into itself
                if u in self.definitions and u not in seen:
                    seen.add(u)
                    todo.append(self.definitions[u])
        return at

    def writes_nothing(self, call: ci.Cursor) -> bool:
        """Whether call `call` can change no object its caller can reach: a call of a
        function of this file (the one its calls run: not weak, static or not
        interposable) that stores nothing through memory, writes no global or static
        variable, does not synchronise and calls only such functions, recursion
        included; or of a C library function known to compute only (_NO_WRITES)."""
        callee = call.referenced
        if callee is None or callee.kind != K.FUNCTION_DECL:
            return False
        usr = callee.get_usr()
        if usr in self.definitions:
            return self.sync.function(usr) is None and self._writes.reason(usr) is None
        return _library_writes_nothing(callee.spelling)

    def _own_writes(self, fn: ci.Cursor) -> tuple[str | None, list[tuple[str, str]]]:
        """What `fn`'s own body writes that its callers could see, first (or None), and
        the calls it makes of functions of this file (CalleeFacts)."""
        if not self._definitive(fn):
            return "a definition another may replace at link time", []
        calls: list[tuple[str, str]] = []
        for c in preorder(fn):
            if c is fn:
                continue
            if c.kind == K.CALL_EXPR:
                callee = c.referenced
                if callee is not None and callee.kind == K.FUNCTION_DECL and \
                        callee.get_usr() in self.definitions:
                    calls.append((callee.get_usr(), callee.spelling))
                elif callee is None or callee.kind != K.FUNCTION_DECL or \
                        not _library_writes_nothing(callee.spelling):
                    return f"a call to {c.spelling or 'a function pointer'}()", calls
                continue
            why = _own_write(c)
            if why is not None:
                return why, calls
        return None, calls

    def _definitive(self, fn: ci.Cursor) -> bool:
        """Whether calls of `fn` run this definition: not weak (an attribute on it or on
        its first declaration, or `#pragma weak`), and `static` or compiled where no
        other definition may interpose (CompileOptions.own_definitions); a non-static
        `inline` definition may stand beside an external one, so it is not either."""
        if fn.spelling in self._weak or any(_has_attribute(d, ("weak", "__weak__"))
                                            for d in (fn, fn.canonical)):
            return False
        if fn.storage_class == ci.StorageClass.STATIC:
            return True
        head = []
        for t in fn.get_tokens():
            if t.spelling == "(":
                break
            head.append(t.spelling)
        if any(w in ("inline", "__inline", "__inline__") for w in head):
            return False
        return self.own_definitions

    def aliased(self) -> set[str]:
        """Names of variables that another name may write (`__attribute__((alias("n")))`
        declares another name for n): both names."""
        if self._aliased is None:
            self._aliased = set()
            for d in self.top:
                if d.kind != K.VAR_DECL:
                    continue
                for k in children(d):
                    if k.kind != K.UNEXPOSED_ATTR:
                        continue
                    words = [t.spelling for t in k.get_tokens()]
                    if "alias" in words or "__alias__" in words:
                        self._aliased.add(d.spelling)
                        self._aliased.update(w.strip('"') for w in words if w.startswith('"'))
        return self._aliased

    def private_array(self, decl: ci.Cursor) -> bool:
        """Whether `decl` declares an array no pointer can point into: a local or
        file-scope `static` array, not volatile, whose every use in the file is the
        base of a chain of subscripts and `.` members down to an element or member that
        is not itself an array, or the operand of sizeof (never decayed to a pointer,
        never `&`)."""
        if decl.kind != K.VAR_DECL or decl.type.is_volatile_qualified() or \
                decl.type.get_canonical().kind not in ARRAY_KINDS:
            return False
        parent = decl.semantic_parent
        local = parent is not None and parent.kind == K.FUNCTION_DECL
        if not local and decl.storage_class != ci.StorageClass.STATIC:
            return False    # another file may take its address
        if local and decl.storage_class == ci.StorageClass.EXTERN:
            return False
        if decl.spelling in self.aliased():
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
            # The base must be an array, not a pointer (`p[i][j]` of `long *p[4]` stores
            # through p[i]) nor the index (`h[0][p]` is `p[h[0]]`).
            if c.type.get_canonical().kind not in ARRAY_KINDS:
                return None
        if c.kind != K.DECL_REF_EXPR or c.referenced is None:
            return None
        return decl_key(c.referenced) if self.private_array(c.referenced) else None


def _library_writes_nothing(name: str) -> bool:
    return name in _NO_WRITES or (name.startswith("__builtin_")
                                  and name[len("__builtin_"):] in _NO_WRITES)


def _has_attribute(c: ci.Cursor, names: tuple[str, ...]) -> bool:
    """Whether declaration `c` carries a GNU attribute named one of `names` (libclang
    shows most as unexposed attributes: their tokens name them)."""
    return any(k.kind == K.UNEXPOSED_ATTR and any(t.spelling in names for t in k.get_tokens())
               for k in children(c))


def _own_write(c: ci.Cursor) -> str | None:
    """What cursor `c` of a function's body changes besides the function's own automatic
    variables (a store through memory, a global or static written, a nested function, a
    cleanup call), or None."""
    if (c.kind == K.FUNCTION_DECL and c.is_definition()) or runs_cleanup(c):
        return "a nested function or a cleanup call"
    target = None
    if c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
        op = binary_operator(c)
        if op.endswith("=") and op not in ("==", "!=", "<=", ">="):
            target = children(c)[0]
    elif c.kind == K.UNARY_OPERATOR and unary_operator(c) in ("post++", "post--", "pre++",
                                                              "pre--"):
        target = children(c)[0]
    if target is None:
        return None
    t = strip(target)
    if t.kind != K.DECL_REF_EXPR or t.referenced is None:
        return "a store through memory"
    d = t.referenced
    if d.kind == K.PARM_DECL or (
            d.kind == K.VAR_DECL and d.semantic_parent is not None
            and d.semantic_parent.kind == K.FUNCTION_DECL
            and d.storage_class not in (ci.StorageClass.STATIC, ci.StorageClass.EXTERN)):
        return None
    return f"a write of {d.spelling}"


def _through_union(target: ci.Cursor) -> bool:
    """Whether store target `target` is (part of) a union member: another member of
    another type shares its bytes."""
    c = strip(target)
    while True:
        if c.kind == K.MEMBER_REF_EXPR:
            f = c.referenced
            if f is not None and f.semantic_parent is not None and \
                    f.semantic_parent.kind == K.UNION_DECL:
                return True
        elif c.kind != K.ARRAY_SUBSCRIPT_EXPR:
            return False
        kids = children(c)
        if not kids:
            return False
        c = strip(kids[0])


def _has_union(t: ci.Type, depth: int = 0) -> bool:
    """Whether an object of type `t` is or holds a union (whose members of other types
    share bytes), looking 4 levels of members deep (deeper: assumed)."""
    t = t.get_canonical()
    while t.kind in ARRAY_KINDS:
        t = t.element_type.get_canonical()
    if t.kind != ci.TypeKind.RECORD:
        return False
    decl = t.get_declaration()
    if decl.kind == K.UNION_DECL or depth >= 4:
        return True
    return any(_has_union(f.type, depth + 1) for f in t.get_fields())


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
        elif k == K.MEMBER_REF_EXPR and kids:
            # `s.m` (and `a->m`, which is a[0].m) is used as the member is, and makes a
            # pointer into its object when the member is an array used as a value.
            whole = c.type.get_canonical().kind in ARRAY_KINDS
            base = "addr" if role == "addr" or (whole and role != "chain") else "chain"
            stack += [(kids[0], base)] + [(d, "value") for d in kids[1:]]
        elif k in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and len(kids) == 1:
            stack.append((kids[0], role))       # an implicit conversion or parentheses
        elif k == K.UNARY_OPERATOR and unary_operator(c) == "&":
            stack += [(d, "addr") for d in kids]
        elif k == K.CXX_UNARY_EXPR:             # sizeof, _Alignof: no value is made
            stack += [(d, "chain") for d in kids]
        else:
            stack += [(d, "value") for d in kids]
    return out
