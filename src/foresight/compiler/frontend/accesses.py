"""What C expressions do, for the statement IR (program_ir.py): the variables they read
and write, the memory they reach through pointers, the calls they make.

frontend/program.py walks statements and hands each one's expressions here.  Arrays and
structs are whole objects (`a[i] = v` defines a); a write through a pointer is an Access
via the variable holding it; where the walk cannot tell, it says unknown rather than
nothing, so a slicer stays correct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import clang.cindex as ci

from foresight.compiler.frontend.cshim import binary_operator, unary_operator, var_initializer
from foresight.compiler.frontend.cursors import (
    ARRAY_KINDS,
    children,
    decl_key,
    end_of,
    start_of,
    strip,
)
from foresight.compiler.frontend.text import FunctionText
from foresight.compiler.options import decode_source
from foresight.compiler.program_ir import Access, Arg, Call, Scope, Var, VarKey

K = ci.CursorKind
T = ci.TypeKind
_STEPS = ("post++", "post--", "pre++", "pre--")


def variable(decl: ci.Cursor) -> Var:
    """The Var of a VAR_DECL or PARM_DECL cursor."""
    t = decl.type.get_canonical()
    if decl.kind == K.PARM_DECL:
        scope = Scope.PARAM
    elif decl.storage_class == ci.StorageClass.EXTERN or (
            decl.semantic_parent is None or decl.semantic_parent.kind != K.FUNCTION_DECL):
        scope = Scope.GLOBAL
    elif decl.storage_class == ci.StorageClass.STATIC:
        scope = Scope.STATIC
    else:
        scope = Scope.LOCAL
    # A parameter declared as an array is a pointer (C 6.7.6.3): what it points to is
    # the caller's, not storage of its own.
    decayed = scope == Scope.PARAM and t.kind in ARRAY_KINDS
    return Var(name=decl.spelling, key=decl_key(decl), scope=scope,
               line=decl.canonical.location.line, type=decl.type.spelling,
               is_array=t.kind in ARRAY_KINDS and not decayed, is_struct=t.kind == T.RECORD,
               is_pointer=t.kind == T.POINTER or decayed,
               holds_address=_holds_address(t) or decayed,
               elsewhere=scope == Scope.GLOBAL and decl.get_definition() is None)


def _decayed(c: ci.Cursor) -> bool:
    """`c` names a parameter declared as an array: a pointer, not an array."""
    return (c.kind == K.DECL_REF_EXPR and c.referenced is not None
            and c.referenced.kind == K.PARM_DECL
            and c.referenced.type.get_canonical().kind in ARRAY_KINDS)


def _holds_address(t: ci.Type) -> bool:
    """Whether an object of canonical type `t` may hold an address (see Var)."""
    while t.kind in ARRAY_KINDS:
        t = t.element_type.get_canonical()
    return t.kind in (T.POINTER, T.RECORD, T.BLOCKPOINTER)


@dataclass(frozen=True)
class Place:
    """Where an lvalue or a pointer value lies: in variable `var`'s own storage, through
    the pointer held by `via` (see program_ir.Access), or unknown (both None)."""

    var: VarKey | None = None
    via: VarKey | None = None
    direct: bool = True


@dataclass
class Facts:
    """What one statement's own expressions do (dicts as ordered sets)."""

    declares: dict[VarKey, None] = field(default_factory=dict)
    defs: dict[VarKey, None] = field(default_factory=dict)
    uses: dict[VarKey, None] = field(default_factory=dict)
    sized: dict[VarKey, None] = field(default_factory=dict)   # named only by sizeof
    address: dict[VarKey, None] = field(default_factory=dict)
    loads: list[Access] = field(default_factory=list)
    stores: list[Access] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)

    def merge(self, other: Facts) -> None:
        for mine, theirs in ((self.declares, other.declares), (self.defs, other.defs),
                             (self.uses, other.uses), (self.address, other.address),
                             (self.sized, other.sized)):
            mine.update(theirs)
        self.loads += other.loads
        self.stores += other.stores
        self.calls += other.calls


class Expressions:
    """The expression walker of one function (text `text`): it also keeps the function's
    variables (by key, in order of first mention) and the functions it names other than
    by calling them."""

    def __init__(self, text: FunctionText):
        self.t = text
        self.vars: dict[VarKey, Var] = {}
        self.fn_refs: dict[str, None] = {}

    def var(self, decl: ci.Cursor) -> VarKey:
        key = decl_key(decl)
        if key not in self.vars:
            self.vars[key] = variable(decl)
        return key

    def declare(self, v: ci.Cursor, f: Facts) -> None:
        """A variable declaration: declared, defined by its initialiser, and the sizes of a
        variable-length array read."""
        key = self.var(v)
        f.declares[key] = None
        init = var_initializer(v)
        for k in children(v):
            if k.kind.is_expression() and (init is None or k != init):
                self.expr(k, f)
        if init is not None:
            self.expr(init, f)
            f.defs[key] = None

    # Expressions ------------------------------------------------------------------------

    def expr(self, c: ci.Cursor, f: Facts) -> None:
        """Walk expression `c`, evaluated for its value, into `f`."""
        c = strip(c)
        k = c.kind
        kids = children(c)
        if k == K.DECL_REF_EXPR:
            d = c.referenced
            if d is not None and d.kind in (K.VAR_DECL, K.PARM_DECL):
                key = self.var(d)
                f.uses[key] = None
                if c.type.get_canonical().kind in ARRAY_KINDS:
                    f.address[key] = None   # an array as a value is its address
            elif d is not None and d.kind == K.FUNCTION_DECL:
                self.fn_refs[d.spelling] = None
            return
        if k in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and len(kids) == 2:
            op = binary_operator(c)
            if op.endswith("=") and op not in ("==", "!=", "<=", ">="):
                self.write(kids[0], f, read=k == K.COMPOUND_ASSIGNMENT_OPERATOR)
                self.expr(kids[1], f)
                return
        elif k == K.UNARY_OPERATOR and len(kids) == 1:
            op = unary_operator(c)
            if op in _STEPS:
                self.write(kids[0], f, read=True)
                return
            if op == "&":
                self.pointer(c, f)
                return
            if op == "*":
                self.read(c, f)
                return
        elif k in (K.ARRAY_SUBSCRIPT_EXPR, K.MEMBER_REF_EXPR):
            self.read(c, f)
            return
        elif k == K.CALL_EXPR:
            self.call(c, kids, f)
            return
        elif k == K.VAR_DECL:      # in a statement expression ({ int t = x; t; })
            self.declare(c, f)
            return
        elif k == K.CXX_UNARY_EXPR and not any(
                ch.type.get_canonical().kind == T.VARIABLEARRAY for ch in kids):
            # sizeof/_Alignof: the operand is not evaluated (but for a variable-length
            # array), so it writes, calls and leaks nothing; what it names counts as used.
            unevaluated = Facts()
            for ch in kids:
                self.expr(ch, unevaluated)
            f.sized.update(unevaluated.uses)
            f.sized.update(unevaluated.sized)
            return
        for ch in kids:
            if ch.kind.is_statement():
                self.inner_statements(ch, f)
            else:
                self.expr(ch, f)

    def inner_statements(self, c: ci.Cursor, f: Facts) -> None:
        """Statements inside an expression (GNU `({ int t = x; t; })`): their
        declarations and expressions belong to the enclosing statement."""
        for ch in children(c):
            if ch.kind == K.VAR_DECL:
                self.declare(ch, f)
            elif ch.kind.is_expression():
                self.expr(ch, f)
            else:
                self.inner_statements(ch, f)

    def read(self, c: ci.Cursor, f: Facts) -> Place:
        """`a[i]`, `s.x`, `p->x`, `*p` read for its value; where it lies."""
        pl = self.lvalue(c, f)
        t = c.type.get_canonical().kind
        if pl.var is not None:
            f.uses[pl.var] = None
            if t in ARRAY_KINDS:
                f.address[pl.var] = None
        elif t not in ARRAY_KINDS and t not in (T.FUNCTIONPROTO, T.FUNCTIONNOPROTO):
            f.loads.append(self.access(pl, c))
        return pl

    def write(self, target: ci.Cursor, f: Facts, read: bool) -> None:
        """An assignment to `target` (`read`: compound or ++/--, also reading it)."""
        pl = self.lvalue(target, f)
        if pl.var is not None:
            f.defs[pl.var] = None
            if read:
                f.uses[pl.var] = None
            return
        a = self.access(pl, target)
        f.stores.append(a)
        if read:
            f.loads.append(a)

    def lvalue(self, c: ci.Cursor, f: Facts) -> Place:
        """Where lvalue `c` lies; the indexes and pointers it reads go into `f`."""
        c = strip(c)
        kids = children(c)
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind in (
                K.VAR_DECL, K.PARM_DECL):
            return Place(var=self.var(c.referenced))
        if c.kind == K.MEMBER_REF_EXPR and kids:
            owner = strip(kids[0])
            if owner.type.get_canonical().kind == T.POINTER:
                return self.pointer(owner, f)      # p->x
            return self.lvalue(owner, f)           # s.x: part of s
        if c.kind == K.ARRAY_SUBSCRIPT_EXPR and len(kids) == 2:
            base, index = kids
            if _pointer_like(strip(index)) and not _pointer_like(strip(base)):
                base, index = index, base          # i[a]
            self.expr(index, f)
            if strip(base).type.get_canonical().kind in ARRAY_KINDS and not _decayed(
                    strip(base)):
                return self.lvalue(base, f)        # a[i]: part of the array a
            return self.pointer(base, f)
        if c.kind == K.UNARY_OPERATOR and len(kids) == 1 and unary_operator(c) == "*":
            if strip(kids[0]).type.get_canonical().kind in ARRAY_KINDS and not _decayed(
                    strip(kids[0])):
                return self.lvalue(kids[0], f)     # *a: part of the array a
            return self.pointer(kids[0], f)
        self.expr(c, f)
        return Place()

    def pointer(self, c: ci.Cursor, f: Facts) -> Place:
        """Where pointer value `c` points, reading it into `f`."""
        c = strip(c)
        kids = children(c)
        t = c.type.get_canonical().kind
        if t in ARRAY_KINDS and not _decayed(c):
            pl = self.lvalue(c, f)                 # an array: its own storage
            if pl.var is not None:
                f.uses[pl.var] = None
                f.address[pl.var] = None
            return pl
        if c.kind == K.DECL_REF_EXPR:
            self.expr(c, f)
            d = c.referenced
            if d is not None and d.kind in (K.VAR_DECL, K.PARM_DECL):
                return Place(via=self.var(d))
            return Place()
        if c.kind == K.UNARY_OPERATOR and len(kids) == 1:
            op = unary_operator(c)
            if op == "&":
                pl = self.lvalue(kids[0], f)
                if pl.var is not None:
                    # Conservative: what the pointer reaches later depends on the variable.
                    f.uses[pl.var] = None
                    f.address[pl.var] = None
                return pl
            if op in _STEPS:
                self.write(kids[0], f, read=True)
                return self.pointer_of(kids[0])
        if c.kind == K.BINARY_OPERATOR and len(kids) == 2 and binary_operator(c) in ("+", "-"):
            a, b = kids
            if _pointer_like(strip(b)) and not _pointer_like(strip(a)):
                a, b = b, a
            if _pointer_like(strip(a)):
                self.expr(b, f)
                return self.pointer(a, f)          # p + i points where p does
        if c.kind == K.BINARY_OPERATOR and len(kids) == 2 and binary_operator(c) == ",":
            self.expr(kids[0], f)
            return self.pointer(kids[1], f)        # (x, p) points where p does
        if c.kind == K.CSTYLE_CAST_EXPR and kids:
            return self.pointer(kids[-1], f)
        if c.kind in (K.ARRAY_SUBSCRIPT_EXPR, K.MEMBER_REF_EXPR) or (
                c.kind == K.UNARY_OPERATOR and len(kids) == 1 and unary_operator(c) == "*"):
            pl = self.lvalue(c, f)                 # a pointer loaded from memory: a[i], *pp
            if pl.var is not None:
                f.uses[pl.var] = None
                return Place(via=pl.var, direct=False)
            f.loads.append(self.access(pl, c))
            return Place(via=pl.via, direct=False) if pl.via else Place()
        self.expr(c, f)
        return Place()

    def pointer_of(self, c: ci.Cursor) -> Place:
        """The place of pointer variable `c` (after p++), without reading it again."""
        c = strip(c)
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind in (
                K.VAR_DECL, K.PARM_DECL):
            return Place(via=self.var(c.referenced))
        return Place()

    def call(self, c: ci.Cursor, kids: list[ci.Cursor], f: Facts) -> None:
        """A call: its callee, and per argument what it reads and may let the callee
        write."""
        if not kids:
            return
        callee = strip(kids[0])
        cf = Facts()
        if (callee.kind == K.DECL_REF_EXPR and callee.referenced is not None
                and callee.referenced.kind == K.FUNCTION_DECL):
            name: str | None = callee.spelling
            ftype = callee.referenced.type.get_canonical()
        else:
            name = None
            self.expr(callee, cf)
            ftype = kids[0].type.get_canonical()
            if ftype.kind == T.POINTER:
                ftype = ftype.get_pointee().get_canonical()
        f.merge(cf)
        params = list(ftype.argument_types()) if ftype.kind == T.FUNCTIONPROTO else []
        # printf and its kin write through no argument after the format, unless the format
        # holds %n (a format that is not a plain literal may).
        fmt = _PRINTS.get(name or "")
        reads_only = -1
        if fmt is not None and name is not None and fmt + 1 < len(kids) and \
                callee.referenced.get_definition() is None and \
                _plain_print_format(self.text(kids[1 + fmt])):
            reads_only = fmt
        # A call in a macro call's argument (`CHECK(pread(...))`): its text and its
        # arguments' where the file spells them whole (FunctionText.macro_argument_call).
        span = None if self.t.spelled(c) else self.t.macro_argument_call(c, name, kids[1:])
        args = []
        for i, a in enumerate(kids[1:]):
            af = Facts()
            t = a.type.get_canonical()
            spelled = self.t.spelled(a)
            text = self.text(a, spelled)
            at = (start_of(a), end_of(a)) if spelled else (-1, -1)
            if span is not None:
                at = span[2][i]
                text = decode_source(self.t.data[at[0]:at[1]])
            pl = Place()
            if t.kind in (T.POINTER, *ARRAY_KINDS) and not _is_function_pointer(t):
                pl = self.pointer(a, af)
                pointer = True
                # A variadic argument: its own type says whether it points to const.
                writable = strip(a).kind != K.STRING_LITERAL and not _read_only(
                    params[i] if i < len(params) else a.type) and not (
                        0 <= reads_only < i)
            elif t.kind == T.RECORD and _lvalue_kind(strip(a)):
                held = self.read(a, af)     # a struct passed by value: its pointers
                pointer = writable = _holds_pointer(t)
                if pointer and (held.var or held.via):
                    pl = Place(via=held.var or held.via, direct=False)
            else:
                self.expr(a, af)
                pointer = writable = _holds_pointer(t)
            if writable:
                if pl.var is not None:
                    af.defs[pl.var] = None
                else:
                    af.stores.append(Access(pl.via, pl.direct, text, a.extent.start.line))
            args.append(Arg(text=text, uses=tuple(af.uses), pointer=pointer,
                            writable=writable, var=pl.var, via=pl.via, direct=pl.direct,
                            start=at[0], end=at[1]))
            f.merge(af)
        target = name if name is not None else self.text(kids[0])
        f.calls.append(Call(callee=name, target=target, line=c.extent.start.line,
                            start=start_of(c) if span is None else span[0],
                            end=end_of(c) if span is None else span[1],
                            args=tuple(args), callee_uses=tuple(cf.uses)))

    def access(self, pl: Place, c: ci.Cursor) -> Access:
        return Access(via=pl.via, direct=pl.direct, text=self.text(c), line=c.extent.start.line)

    def text(self, c: ci.Cursor, spelled: bool | None = None) -> str:
        """The source text of expression `c`, for reports; its name when a macro made
        it, else "" (`spelled`: whether the file's text spells it, if known)."""
        if self.t.spelled(c) if spelled is None else spelled:
            return self.t.text(c)
        c = strip(c)
        return c.spelling if c.kind == K.DECL_REF_EXPR else ""


def _lvalue_kind(c: ci.Cursor) -> bool:
    return c.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR) or (
        c.kind == K.UNARY_OPERATOR and unary_operator(c) == "*")


def _pointer_like(c: ci.Cursor) -> bool:
    return c.type.get_canonical().kind in (T.POINTER, *ARRAY_KINDS)


def _is_function_pointer(t: ci.Type) -> bool:
    return t.kind == T.POINTER and t.get_pointee().get_canonical().kind in (
        T.FUNCTIONPROTO, T.FUNCTIONNOPROTO)


def _holds_pointer(t: ci.Type, depth: int = 0) -> bool:
    """Whether a value of type `t` carries a pointer (a struct or union with a pointer
    member, to two levels): passed by value, the callee may write through it."""
    t = t.get_canonical()
    if t.kind == T.POINTER:
        return not _is_function_pointer(t)
    if t.kind in ARRAY_KINDS:
        return _holds_pointer(t.element_type, depth)
    if t.kind == T.RECORD and depth < 2:
        return any(_holds_pointer(m.type, depth + 1) for m in t.get_fields())
    return False


# The C library's formatted printers: name -> index of the format argument.
_PRINTS = {"printf": 0, "fprintf": 1, "dprintf": 1, "sprintf": 1, "snprintf": 2,
           "syslog": 1, "warn": 0, "warnx": 0, "err": 1, "errx": 1,
           # _FORTIFY_SOURCE's forms (a flag, and for buffers their size, first)
           "__printf_chk": 1, "__fprintf_chk": 2, "__dprintf_chk": 2, "__sprintf_chk": 3,
           "__snprintf_chk": 4, "__syslog_chk": 2}
# A literal's pieces (adjacent literals concatenate) and <inttypes.h>'s length macros.
_LITERAL_PIECE = re.compile(r'\s*(?:"(?:[^"\\\n]|\\.)*"|'
                            r'PRI[diouxX](?:8|16|32|64|LEAST(?:8|16|32|64)|'
                            r'FAST(?:8|16|32|64)|MAX|PTR))\s*')
_CONVERSION = re.compile(r"%(?:\d+\$)?[-+ #0'I]*(?:\*(?:\d+\$)?|\d+)?"
                         r"(?:\.(?:\*(?:\d+\$)?|\d+))?(?:hh|h|ll|l|L|q|j|z|Z|t)?(.)", re.S)


def _plain_print_format(text: str) -> bool:
    """Whether a printf format, as spelled in the call, is string literals (and
    <inttypes.h>'s PRI macros) holding no %n: then printf writes through no argument."""
    pos = 0
    while pos < len(text):
        m = _LITERAL_PIECE.match(text, pos)
        if m is None or m.end() == pos:
            return False
        pos = m.end()
    literal = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', text))
    if re.search(r"\\[0-7xuU]", literal):
        return False        # an escape could spell `%n`
    return "n" not in {m.group(1) for m in _CONVERSION.finditer(literal)}


def _read_only(param: ci.Type | None) -> bool:
    """A parameter (or a variadic argument's type) through which the callee may not
    write: a pointer to const data that holds no pointers itself (`const char *`, not
    `char *const *`).  None (unknown): writable."""
    if param is None:
        return False
    t = param.get_canonical()
    if t.kind != T.POINTER:
        return False
    pointee = t.get_pointee()
    return pointee.is_const_qualified() and not _holds_pointer(pointee)
