"""The statement IR: per function, its statements with what each defines, uses and calls.

It exists for slicing: the prefetch-thread slicer (issue 24; AASFP, "Application-Specific
File Prefetching", Section 4.1) computes related_set(x) from the statements that define x
and the variables those statements use, adds the conditions of every loop/if/switch that
contains a kept statement, and the declarations of the kept variables.  The loop-nest IR
(ir.py) serves the prefetch pass; this one serves passes that need whole functions.
frontend/program.py builds it from libclang; nothing here knows about libclang.

What it guarantees, so that a slicer built on it stays correct:
- Variables are named by VarKey, their canonical declaration (file, offset, name): an
  inner `int fd` and the outer `fd` it shadows are different keys; a block-scope
  `extern int g;` is the file-scope `g`.
- Arrays, structs and unions are whole objects: writing `a[i]` or `s.x` defines `a` or
  `s`; defs are may-definitions (the rest of the object keeps its value).
- Nothing is dropped where the front end is unsure: a store through a pointer is an
  Access (through which variable's pointer, or unknown); a variable whose address is
  taken (`&x`, an array used as a pointer) is in the statement's and the function's
  address_taken, and in the uses of the statement taking it (what the pointer reaches
  later depends on it); a call's writable pointer argument defines the variable it
  points into (`read(fd, &n, 4)` defines n) or is a store through the pointer; a
  statement the front end does not model (asm, an OpenMP directive under -fopenmp) has
  kind OTHER: every variable it mentions used and defined, a store through every
  pointer it mentions and an unknown store, and it is the control parent of the
  statements inside it.
- Each Stmt's defs/uses/calls are of its own expressions only (an if's condition, a
  for's header), not of the statements inside it: those are its children.
- Every object is frozen and holds tuples: built once, never edited by a later stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

# A variable's identity: (file, offset, name) of its canonical declaration
# (frontend/cursors.decl_key).
VarKey = tuple[str, int, str]


class Scope(str, Enum):
    LOCAL = "local"      # automatic variable of the function
    PARAM = "param"
    GLOBAL = "global"    # file scope (static or extern), or a block-scope extern
    STATIC = "static"    # `static` inside the function: lives across calls


class StmtKind(str, Enum):
    EXPR = "expr"            # an expression statement
    DECL = "decl"            # a declaration of variables (with or without initialisers)
    COMPOUND = "compound"
    IF = "if"                # children: then, else (if any)
    SWITCH = "switch"
    CASE = "case"            # `case V:` or `default:`; child: the labelled statement
    WHILE = "while"
    DO = "do"
    FOR = "for"              # own defs/uses: init, condition, increment
    RETURN = "return"
    BREAK = "break"
    CONTINUE = "continue"
    GOTO = "goto"
    LABEL = "label"          # `name:`; child: the labelled statement
    NULL = "null"            # `;`
    OTHER = "other"          # not modelled: every variable it mentions used and defined

    @property
    def is_loop(self) -> bool:
        return self in (StmtKind.WHILE, StmtKind.DO, StmtKind.FOR)

    @property
    def is_control(self) -> bool:
        """A statement whose condition decides whether its children run (OTHER: it may)."""
        return self.is_loop or self in (StmtKind.IF, StmtKind.SWITCH, StmtKind.OTHER)


@dataclass(frozen=True)
class Var:
    name: str
    key: VarKey
    scope: Scope
    line: int                # of its canonical declaration
    type: str                # as clang spells it
    is_array: bool = False
    is_struct: bool = False  # a struct or union
    is_pointer: bool = False
    # Its bytes may hold an address: a pointer, a struct or union (any member may be
    # one), or an array of either (`char *bufs[2]`, `struct io ios[4]`).
    holds_address: bool = False
    # Declared, not defined, in this unit (`extern int optind;`): another unit's, or libc's.
    elsewhere: bool = False


@dataclass(frozen=True)
class Access:
    """A read or write through memory: `*p`, `p[i]`, `p->x`, or a call writing through a
    pointer argument.  `via` is the variable holding the pointer, `direct` whether it is
    the pointer itself (`p`, `p + i`) or the pointer is loaded from that variable's object
    (`a[i]->x`, `*s.p`, `**pp`); via None: a pointer no variable holds (a call's result,
    `c ? p : q`), which may point anywhere."""

    via: VarKey | None
    direct: bool
    text: str
    line: int

    @property
    def unknown(self) -> bool:
        return self.via is None


@dataclass(frozen=True)
class Arg:
    """One argument of a call."""

    text: str
    uses: tuple[VarKey, ...]
    # A pointer (or an array, or a struct holding a pointer): the callee may reach memory
    # through it.
    pointer: bool = False
    # The callee may write through it: a pointer whose parameter is not a pointer to const
    # (any pointer passed as a variadic or unprototyped argument), not a string literal.
    writable: bool = False
    var: VarKey | None = None   # the variable whose own storage it points into (&x, buf)
    via: VarKey | None = None   # else the variable holding the pointer (see Access)
    direct: bool = True
    start: int = -1             # its byte range in the main file; -1: a macro made it
    end: int = -1


@dataclass(frozen=True)
class Call:
    callee: str | None          # the function's name; None: an indirect call
    target: str                 # the callee's text (`read`, `fp`, `ops->read`)
    line: int
    start: int
    end: int
    args: tuple[Arg, ...]
    callee_uses: tuple[VarKey, ...] = ()   # an indirect call's function-pointer variables

    @property
    def indirect(self) -> bool:
        return self.callee is None

    @property
    def name(self) -> str:
        """The callee's name, or "indirect"."""
        return self.callee if self.callee is not None else "indirect"


@dataclass(frozen=True)
class Stmt:
    id: int                      # index in Function.stmts (preorder; 0 is the body)
    kind: StmtKind
    line: int
    start: int                   # byte range in the main file, a final ';' included
    end: int
    parent: int | None           # the statement directly containing it
    control: int | None          # the nearest enclosing if/switch/loop/OTHER (control parent)
    children: tuple[int, ...] = ()
    declares: tuple[VarKey, ...] = ()    # variables it declares (a for's init too)
    defs: tuple[VarKey, ...] = ()
    uses: tuple[VarKey, ...] = ()
    cond_uses: tuple[VarKey, ...] = ()   # if/switch/loop: what its condition reads; OTHER: uses
    unevaluated: tuple[VarKey, ...] = ()  # in uses, but named only by sizeof (not read)
    sized: tuple[VarKey, ...] = ()        # every variable a sizeof in it names
    loads: tuple[Access, ...] = ()
    stores: tuple[Access, ...] = ()
    calls: tuple[Call, ...] = ()         # in evaluation order, inner calls first
    address_taken: tuple[VarKey, ...] = ()
    label: str | None = None     # LABEL and GOTO: the label's name
    target: int | None = None    # BREAK/CONTINUE: the loop or switch; GOTO: the LABEL
    spelled: bool = True         # the file's text at [start, end) is this statement
    from_macro: bool = False     # a macro expansion produced it (`READ(n);`)


@dataclass(frozen=True)
class Function:
    name: str
    line: int
    start: int
    end: int
    params: tuple[Var, ...]
    locals: tuple[Var, ...]      # every variable declared in the body, statics included
    globals: tuple[Var, ...]     # file-scope variables it reads, writes or takes
    stmts: tuple[Stmt, ...]      # preorder; stmts[0] is the body
    address_taken: tuple[VarKey, ...] = ()
    function_refs: tuple[str, ...] = ()  # functions it names other than by calling them
    # Every mention of a file-scope variable in the body: (start, end, key, spelled), where
    # spelled is False when a macro expansion made it (the text there is not the name).
    global_refs: tuple[tuple[int, int, VarKey, bool], ...] = ()
    internal: bool = False   # internal linkage (`static`, spelled or made by a macro)

    def var(self, key: VarKey) -> Var:
        for v in (*self.params, *self.locals, *self.globals):
            if v.key == key:
                return v
        raise KeyError(key)

    def controls(self, stmt: int) -> list[Stmt]:
        """The if/switch/loop statements containing `stmt`, innermost first."""
        out = []
        at = self.stmts[stmt].control
        while at is not None:
            out.append(self.stmts[at])
            at = self.stmts[at].control
        return out

    def within(self, stmt: int) -> list[Stmt]:
        """`stmt` and every statement inside it, in preorder."""
        out, todo = [], [stmt]
        while todo:
            s = self.stmts[todo.pop()]
            out.append(s)
            todo.extend(reversed(s.children))
        return out


@dataclass(frozen=True)
class Program:
    file: str
    functions: tuple[Function, ...]      # the main file's definitions, in source order
    globals: tuple[Var, ...] = ()        # file-scope variables declared in the main file
    # Functions named anywhere other than as a direct callee (function pointers may
    # reach them).
    address_taken_functions: tuple[str, ...] = ()

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)
