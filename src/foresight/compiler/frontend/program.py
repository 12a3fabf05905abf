"""libclang cursors → the statement IR (program_ir.py) of a file's function definitions.

One walk per function: each statement gets an id in preorder, its parent, its control
parent and the defs, uses, memory accesses and calls of its own expressions.  Where the
walk cannot tell what an expression reaches it says so rather than leave it out (an
unknown Access, a writable pointer argument, an OTHER statement): the slicer of issue 24
must keep every statement a prefetch's arguments may depend on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from foresight.compiler.frontend.accesses import Expressions, Facts, variable
from foresight.compiler.frontend.cshim import evaluate_int
from foresight.compiler.frontend.cursors import children, decl_key, end_of, preorder, start_of
from foresight.compiler.frontend.text import FunctionText
from foresight.compiler.frontend.unit import Unrepeatable, counting_macros, load, macro_ranges
from foresight.compiler.program_ir import Access, Function, Program, Scope, Stmt, StmtKind, VarKey

K = ci.CursorKind

_KINDS = {
    K.COMPOUND_STMT: StmtKind.COMPOUND, K.DECL_STMT: StmtKind.DECL, K.IF_STMT: StmtKind.IF,
    K.SWITCH_STMT: StmtKind.SWITCH, K.CASE_STMT: StmtKind.CASE, K.DEFAULT_STMT: StmtKind.CASE,
    K.WHILE_STMT: StmtKind.WHILE, K.DO_STMT: StmtKind.DO, K.FOR_STMT: StmtKind.FOR,
    K.RETURN_STMT: StmtKind.RETURN, K.BREAK_STMT: StmtKind.BREAK,
    K.CONTINUE_STMT: StmtKind.CONTINUE, K.GOTO_STMT: StmtKind.GOTO,
    K.LABEL_STMT: StmtKind.LABEL, K.NULL_STMT: StmtKind.NULL,
}


def parse_program(path: Path | str, clang_args: list[str], text: bytes | None = None) -> Program:
    """The statement IR of the C file at `path` (or of `text`, as that file), parsed as
    `foresight cc` parses it (unit.load: the same arguments and builtin headers;
    ParseFailure on errors)."""
    data = Path(path).read_bytes() if text is None else text
    # The prefetch thread's statements: code under an OpenMP directive stays one
    # statement that may write anything it mentions (Builder: StmtKind.OTHER).
    tu = load(Path(path), clang_args, hide_openmp=True, text=text)
    return build(tu, data, str(tu.spelling), clang_args)


def build(tu: ci.TranslationUnit, data: bytes, main_file: str,
          clang_args: list[str] | None = None) -> Program:
    """The statement IR of the function definitions of `main_file` (whose bytes are
    `data`) in translation unit `tu` (parsed with `clang_args`)."""
    top = children(tu.cursor)
    macros = macro_ranges(top, main_file)
    counting = counting_macros(tu, top, data)
    quoting = Unrepeatable(top, list(clang_args or ()), roots=(), quotes=True)
    mine = [c for c in top if c.location.file is not None and str(c.location.file) == main_file]
    # Where each file is #include'd (an #include inside a body places its statements).
    includes: dict[str, list[tuple[int, int, int]]] = {}
    for c in mine:
        if c.kind == K.INCLUSION_DIRECTIVE and c.get_included_file() is not None:
            includes.setdefault(c.get_included_file().name, []).append(
                (start_of(c), end_of(c), c.extent.start.line))
    functions, named = [], set()
    for fn in mine:
        if fn.kind == K.FUNCTION_DECL and fn.is_definition():
            f = _Function(fn, FunctionText(fn, data, main_file, macros, counting,
                                           quoting=quoting), includes).build()
            functions.append(f)
            named.update(f.function_refs)
    globals_, seen = [], set()
    for c in mine:
        if c.kind == K.VAR_DECL:
            v = variable(c)
            if v.key not in seen:
                seen.add(v.key)
                globals_.append(v)
            # A function named in an initialiser (`struct ops o = { .read = myread };`).
            named.update(d.referenced.spelling for d in preorder(c)
                         if d.kind == K.DECL_REF_EXPR and d.referenced is not None
                         and d.referenced.kind == K.FUNCTION_DECL)
    return Program(file=main_file, functions=tuple(functions), globals=tuple(globals_),
                   address_taken_functions=tuple(sorted(named)))


@dataclass
class _Draft:
    """A statement being built: its fields but children, target and label resolution."""

    kind: StmtKind
    cursor: ci.Cursor
    line: int
    start: int
    end: int
    parent: int | None
    control: int | None
    spelled: bool
    from_macro: bool
    facts: Facts = field(default_factory=Facts)
    cond_uses: tuple[VarKey, ...] = ()
    children: list[int] = field(default_factory=list)
    label: str | None = None
    target: int | None = None


class _Function:
    """The builder of one function definition's statement IR."""

    def __init__(self, fn: ci.Cursor, text: FunctionText,
                 included: dict[str, list[tuple[int, int, int]]]):
        self.fn, self.t = fn, text
        self.main = text.main
        self.x = Expressions(text)
        self.drafts: list[_Draft] = []
        self.labels: dict[str, int] = {}
        # Asking every statement its file costs; only a body whose text may #include
        # something can hold statements of another file (as analysis/effects.py does).
        self.includes = b"include" in text.data[start_of(fn):end_of(fn)]
        lo, hi = start_of(fn), end_of(fn)
        self.included = {name: next(r for r in places if lo <= r[0] < hi)
                         for name, places in included.items()
                         if any(lo <= r[0] < hi for r in places)}

    def build(self) -> Function:
        params = []
        for c in children(self.fn):
            if c.kind == K.PARM_DECL:
                params.append(self.x.vars[self.x.var(c)])
        body = next((c for c in children(self.fn) if c.kind == K.COMPOUND_STMT), None)
        if body is not None:
            self.stmt(body, None, None, None, None,
                      (start_of(self.fn), end_of(self.fn),
                       self.fn.location.line))
        stmts = []
        for i, d in enumerate(self.drafts):
            if d.kind == StmtKind.GOTO:
                d.target = self.labels.get(d.label or "")
            f = d.facts
            stmts.append(Stmt(
                id=i, kind=d.kind, line=d.line, start=d.start, end=d.end, parent=d.parent,
                control=d.control, children=tuple(d.children), declares=tuple(f.declares),
                defs=tuple(f.defs), uses=tuple(dict.fromkeys([*f.uses, *f.sized])),
                unevaluated=tuple(k for k in f.sized if k not in f.uses),
                sized=tuple(f.sized),
                cond_uses=d.cond_uses,
                loads=tuple(f.loads), stores=tuple(f.stores), calls=tuple(f.calls),
                address_taken=tuple(f.address), label=d.label, target=d.target,
                spelled=d.spelled, from_macro=d.from_macro))
        declared = {k for d in self.drafts for k in d.facts.declares}
        address = {k: None for d in self.drafts for k in d.facts.address}
        touched = {k for d in self.drafts
                   for k in (*d.facts.defs, *d.facts.uses, *d.facts.sized, *d.facts.address)}
        return Function(
            name=self.fn.spelling, line=self.fn.location.line,
            start=start_of(self.fn), end=end_of(self.fn),
            params=tuple(params),
            locals=tuple(v for k, v in self.x.vars.items()
                         if k in declared and v.scope in (Scope.LOCAL, Scope.STATIC)),
            globals=tuple(v for k, v in self.x.vars.items()
                          if v.scope == Scope.GLOBAL and k in touched),
            stmts=tuple(stmts), address_taken=tuple(address),
            function_refs=tuple(self.x.fn_refs), global_refs=self.global_refs(),
            internal=self.fn.linkage == ci.LinkageKind.INTERNAL)

    def global_refs(self) -> tuple[tuple[int, int, VarKey, bool], ...]:
        """Every mention of a file-scope variable in the body (Function.global_refs) that
        is evaluated: the operand of a `sizeof` whose value is a constant names only a
        type, which the program's variable gives the thread as well as a copy would."""
        out = []
        stack = [self.fn]
        while stack:
            c = stack.pop()
            if c.kind == K.CXX_UNARY_EXPR and evaluate_int(c) is not None:
                continue    # a constant: nothing under it is read (not `sizeof(int[g])`)
            stack.extend(reversed(children(c)))
            if c.kind != K.DECL_REF_EXPR or c.referenced is None:
                continue
            d = c.referenced
            if d.kind != K.VAR_DECL or self.x.vars.get(decl_key(d)) is None:
                continue
            key = decl_key(d)
            if self.x.vars[key].scope != Scope.GLOBAL:
                continue
            s, e = start_of(c), end_of(c)
            ok = self.t.in_file(c) and self.t.data[s:e] == d.spelling.encode()
            if not ok:      # in a macro call's argument, spelled there
                at = self.t.macro_argument_name(c, d.spelling)
                if at is not None:
                    s, e, ok = at, at + len(d.spelling.encode()), True
            out.append((s, e, key, ok))
        return tuple(out)

    def stmt(self, c: ci.Cursor, parent: int | None, control: int | None,
             breaks: int | None, continues: int | None, outer: tuple[int, int, int]) -> int:
        """Add statement `c` and those inside it; its id.  `breaks`/`continues`: the
        statements a break/continue here leaves; `outer`: the nearest enclosing range and
        line in the main file (for a statement of an #include'd file)."""
        kind = _KINDS.get(c.kind)
        if kind is None:
            kind = StmtKind.EXPR if c.kind.is_expression() else StmtKind.OTHER
        ext = c.extent
        here = not self.includes or (ext.start.file is not None
                                     and ext.start.file.name == self.main)
        if here:
            start, line = ext.start.offset, ext.start.line
            end = self.t.stmt_end(c) or ext.end.offset
            spelled = self.t.spelled(c)
            # Inside (or exactly) one expansion's text: the macro made the statement.
            from_macro = any(ms <= start and ext.end.offset <= me_ and ms < me_
                             for ms, me_ in self.t.macros)
        else:
            # The #include directive that brought it in, else the enclosing statement.
            name = ext.start.file.name if ext.start.file is not None else ""
            start, end, line = self.included.get(name, outer)
            spelled, from_macro = False, False
        me = len(self.drafts)
        d = _Draft(kind, c, line, start, end, parent, control, spelled, from_macro)
        self.drafts.append(d)
        kids = children(c)
        place = (start, end, line)

        def child(k: ci.Cursor, ctl: int | None = control, brk: int | None = breaks,
                  cont: int | None = continues) -> None:
            d.children.append(self.stmt(k, me, ctl, brk, cont, place))

        f = d.facts
        if kind == StmtKind.COMPOUND:
            for k in kids:
                child(k)
        elif kind == StmtKind.DECL:
            for k in kids:
                if k.kind == K.VAR_DECL:
                    self.x.declare(k, f)
        elif kind == StmtKind.EXPR:
            self.x.expr(c, f)
        elif kind in (StmtKind.IF, StmtKind.SWITCH, StmtKind.WHILE) and kids:
            d.cond_uses = self.cond(kids[0], f)
            for k in kids[1:]:
                if kind == StmtKind.IF:
                    child(k, me)
                elif kind == StmtKind.SWITCH:
                    child(k, me, me)
                else:
                    child(k, me, me, me)
        elif kind == StmtKind.DO and kids:
            child(kids[0], me, me, me)
            d.cond_uses = self.cond(kids[-1], f) if len(kids) > 1 else ()
        elif kind == StmtKind.FOR and kids:
            self.for_header(c, kids[:-1], d)
            child(kids[-1], me, me, me)
        elif kind == StmtKind.CASE:
            for k in kids[:-1]:
                self.x.expr(k, f)   # the case's constant
            if kids:
                child(kids[-1])
        elif kind == StmtKind.LABEL:
            d.label = c.spelling
            self.labels[c.spelling] = me
            if kids:
                child(kids[0])
        elif kind == StmtKind.GOTO:
            d.label = next((k.spelling for k in kids if k.kind == K.LABEL_REF), None)
        elif kind in (StmtKind.BREAK, StmtKind.CONTINUE):
            d.target = breaks if kind == StmtKind.BREAK else continues
        elif kind == StmtKind.RETURN:
            for k in kids:
                self.x.expr(k, f)
        elif kind == StmtKind.OTHER:
            for k in kids:
                if k.kind.is_statement():
                    child(k, me)
                else:
                    self.x.expr(k, f)
            # Not modelled (asm, an OpenMP directive under -fopenmp, whose body libclang
            # hides, a computed goto): it may write anything it mentions, through any
            # pointer it mentions, and any memory; it decides whether its children run.
            f.defs.update(f.uses)
            f.defs.update(f.address)
            f.stores += [Access(k, True, "", line) for k in f.uses if self.x.vars[k].is_pointer]
            f.stores.append(Access(None, True, "", line))
            d.cond_uses = tuple(f.uses)
        return me

    def cond(self, c: ci.Cursor, f: Facts) -> tuple[VarKey, ...]:
        """Walk condition `c` into `f`; the variables it reads."""
        cf = Facts()
        self.x.expr(c, cf)
        f.merge(cf)
        return tuple(cf.uses)

    def for_header(self, c: ci.Cursor, header: list[ci.Cursor], d: _Draft) -> None:
        """A for's init, condition and increment (each may be missing: libclang then
        leaves it out of the children, so the text says which is which)."""
        parts = self.t.header_parts(c) if self.t.in_file(c) else None
        cond: list[VarKey] = []
        for k in header:
            kf = Facts()
            if k.kind == K.DECL_STMT:
                for v in children(k):
                    if v.kind == K.VAR_DECL:
                        self.x.declare(v, kf)
            else:
                self.x.expr(k, kf)
            o = start_of(k)
            # Without the text's semicolons every part counts as the condition: a
            # superset, so the slicer keeps more, never less.
            if parts is None or parts[1] <= o < parts[2]:
                cond += kf.uses
            d.facts.merge(kf)
        d.cond_uses = tuple(dict.fromkeys(cond))

