"""For statements as Loops: a canonical counted loop (`for (v = lo; v OP hi; v += c)`,
or a pointer walk `for (p = a; p < e; p++)`) with its bounds, trip count, what its body
does (exits, calls, integer stores) and the references and loops inside it; or a Refusal
saying why a for statement is not one.  The outermost analysable loops become the
function's LoopNests; a nest that cannot be edited safely (a jump into it, a pragma that
annotates none of its loops) is recorded with the reason."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import clang.cindex as ci

from foresight.compiler.analysis.effects import Effects, UnitEffects
from foresight.compiler.frontend import pragmas
from foresight.compiler.frontend.cshim import (
    binary_operator,
    evaluate_int,
    file_offset,
    unary_operator,
)
from foresight.compiler.frontend.cursors import (
    INT_KINDS,
    children,
    decl_key,
    end_of,
    index_subtrees,
    is_unsigned,
    mark_variable,
    preorder,
    runs_cleanup,
    start_of,
    strip,
    subtree,
)
from foresight.compiler.frontend.fresh import first_touch
from foresight.compiler.frontend.refs import References
from foresight.compiler.frontend.text import FunctionText
from foresight.compiler.frontend.values import Values
from foresight.compiler.ir import (
    Affine,
    ArrayRef,
    Loop,
    LoopNest,
    OmpLoop,
    Refusal,
    Sym,
    sym_value,
)
from foresight.compiler.options import line_at

K = ci.CursorKind
_DIGRAPHS = frozenset({"<%", "%>", "<:", ":>", "%:", "%:%:"})
_FLOATING = frozenset({ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE,
                       ci.TypeKind.FLOAT128, ci.TypeKind.HALF, ci.TypeKind.COMPLEX})
_JUMPS = {K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT, K.RETURN_STMT, K.INDIRECT_GOTO_STMT}
_OPS = {K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR, K.UNARY_OPERATOR,
        K.ARRAY_SUBSCRIPT_EXPR, K.CALL_EXPR, K.CONDITIONAL_OPERATOR}
_NORETURN = {"exit", "_Exit", "abort", "quick_exit", "longjmp", "siglongjmp", "_longjmp"}
_NORETURN_TYPE = "__attribute__((noreturn))"
# Operators whose floating-point results cc may reorder under -ffast-math (Loop.float_math)
_ARITHMETIC = frozenset({K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR})
_REORDERABLE = _FLOATING | {ci.TypeKind.VECTOR}   # (a vector of floats, or of anything)
_FLOAT_OPS = frozenset({"+", "-", "*", "/", "+=", "-=", "*=", "/="})


def _code(line: bytes) -> bytes:
    """A line's text without its comments (those that open and close on it, and a `//`
    one), stripped."""
    line = re.sub(rb"/\*.*?\*/", b" ", line)
    cut = line.find(b"//")
    return (line[:cut] if cut >= 0 else line).strip()


def may_not_return(call: ci.Cursor, seen: frozenset = frozenset()) -> bool:
    """Whether `call` may end the program or jump out of the loop: a function of
    _NORETURN, one whose type says noreturn (`__builtin_trap`, `err`, `__assert_fail`, a
    declaration's `__attribute__((noreturn))`), or a function defined in this file that
    (through its own calls, three levels deep) makes such a call (`_Noreturn` alone is
    not in the type: its body's call of abort() says it)."""
    if call.spelling in _NORETURN:
        return True
    fn = call.referenced
    if fn is None:
        return False
    if _NORETURN_TYPE in fn.type.spelling:
        return True
    body = fn.get_definition()
    if body is None or len(seen) >= 3 or body.hash in seen:
        return False
    key = (body.hash, start_of(body))
    if not seen and key in _ENDS:
        return _ENDS[key]
    inner = seen | {body.hash}
    ends = any(d.kind == K.CALL_EXPR and may_not_return(d, inner) for d in preorder(body))
    if not seen:
        _ENDS[key] = ends
    return ends


# may_not_return's answers for the function definitions of the unit being read, by
# cursor hash and offset (cleared with each new translation unit: end_unit)
_ENDS: dict[tuple[int, int], bool] = {}


def end_unit() -> None:
    _ENDS.clear()
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}


@dataclass
class _Body:
    """What the walk of one loop's body collects, before the Loop is built."""

    children: list[Loop] = field(default_factory=list)
    refs: list[ArrayRef] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ops: int = 0


@dataclass(frozen=True)
class _Cond:
    """A loop condition `v OP bound`, as the loop variable sees it."""

    op: str
    bound: ci.Cursor
    text: str
    aff: Affine | None


def function_nests(fn: ci.Cursor, data: bytes, main: str, macros: list[tuple[int, int]],
                   unit: UnitEffects, counting: set[str],
                   unrepeatable: Callable[[str], bool] | None = None,
                   line_reading: Callable[[str], bool] | None = None,
                   repeatable: Callable[[str], bool] | None = None,
                   pragma_macros: list[tuple[int, int]] = ()) -> list[LoopNest]:
    """The loop nests of function definition `fn` of file `main`, in source order, with
    the outermost loops that are not nests recorded as unanalysed (`pragma_macros`: the
    file's macro expansions that make a pragma, unit.pragma_expansions)."""
    if not any(d.kind in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT) for d in preorder(fn)):
        return []       # no loop to analyse or report: no walk over its effects
    index_subtrees(fn)
    effects = Effects(fn, unit, main, includes=b"include" in data[start_of(fn):end_of(fn)])
    builder = _Loops(fn, FunctionText(fn, data, main, macros, counting, unrepeatable,
                                      line_reading),
                     Values(fn, data, effects), repeatable, pragma_macros)
    builder.scan(fn)
    return builder.nests


class _Loops:
    """The nest builder of one function."""

    def __init__(self, fn: ci.Cursor, text: FunctionText, values: Values,
                 repeatable: Callable[[str], bool] | None = None,
                 pragma_macros: list[tuple[int, int]] = ()):
        self.fn, self.t, self.v = fn, text, values
        self.pragma_macros = pragma_macros
        # Whether a clause's text may be evaluated again (unit.Repeatable).
        self.repeatable = repeatable or (lambda text: False)
        self.data, self.main = text.data, text.main
        # Pointer-walk loop variables (`for (p = a; p < e; p++)`): their value, taken as
        # (uintptr_t)p, is the address itself, so they step by the object's size in bytes.
        self.walks: set[tuple] = set()
        self.refs = References(text, values, self.walks)
        self.nests: list[LoopNest] = []

    def inline_callees(self, c: ci.Cursor) -> tuple[tuple[str, int, int], ...]:
        """LoopNest.inline_callees of the nest at `c`."""
        out = []
        for d in preorder(c):
            if d.kind == K.CALL_EXPR:
                at = self.v.effects.unit.inline_point(d.referenced, self.main)
                if at is not None:
                    out.append((d.spelling, line_at(self.data, at), at))
        return tuple(out)

    def scan(self, c: ci.Cursor) -> None:
        """Find outermost analysable for-loops below `c` and build a nest for each."""
        for ch in children(c):
            if ch.kind == K.FOR_STMT:
                self.v.nest_end[start_of(ch)] = end_of(ch)
                loop = self.loop(ch, depth=0, outer={}, nest_start=start_of(ch))
                if isinstance(loop, Refusal):
                    self.unanalysed(ch, loop.why)
                    self.scan(ch)
                    continue
                uncopyable = _uncopyable(ch, self.t)
                uneditable = self.uneditable(loop, ch)
                self.nests.append(LoopNest(function=self.fn.spelling, root=loop,
                                           file=self.main,
                                           skipped=uneditable or self.pragmas_in(loop) or
                                           self.fresh(c, ch, loop),
                                           uneditable=uneditable,
                                           uncopyable=uncopyable,
                                           inline_callees=() if uncopyable else
                                           self.inline_callees(ch)))
            elif ch.kind in (K.WHILE_STMT, K.DO_STMT):
                self.unanalysed(ch, "a while or do loop: only counted for-loops are analysed")
                self.scan(ch)
            else:
                self.scan(ch)

    def unanalysed(self, c: ci.Cursor, why: str) -> None:
        """Record an outermost loop of this file that is left unchanged, for the report
        (loops inside it may still become nests of their own)."""
        if file_offset(c.location)[0] != self.main:
            return
        if any(d.kind in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)
                          for d in preorder(c) if d != c):
            why += "; the loops inside it are looked at on their own"
        self.nests.append(LoopNest(function=self.fn.spelling, root=None, file=self.main,
                                   skipped=why, unanalysed_line=c.location.line))

    def inline_only(self) -> bool:
        """Whether the function is a C99 inline definition, not an external one: `inline`
        without `static` or `extern` in the words before its body."""
        body = next((k for k in children(self.fn) if k.kind == K.COMPOUND_STMT), None)
        if body is None:
            return False
        head = set(re.findall(rb"\w+", self.data[start_of(self.fn):start_of(body)]))
        return bool(head & {b"inline", b"__inline", b"__inline__"}) and not (
            head & {b"static", b"extern"})

    def uneditable(self, root: Loop, cursor: ci.Cursor) -> str | None:
        """Why no text may be added to nest `root` at all, or None."""
        jump = _jump_target(cursor, in_switch=False)
        if jump is not None:
            # A jump from outside would enter the nest without the values taken at entry
            # (uninitialised hint variables; -Wjump-misses-init).
            return jump
        text = self.data[root.start:root.end]
        if b"_Pragma" in text:
            return "a _Pragma inside the nest (OpenMP or similar): left unchanged"
        if self.inline_only():
            return ("in an inline definition (C99 `inline`, neither static nor extern): "
                    "cc may stop inlining its hinted copy, and then needs an external "
                    "definition the program may not have: left unchanged")
        if any(t.spelling in _DIGRAPHS for t in self.t.tokens(cursor)):
            # The edits find braces and brackets as one character.
            return "written with digraphs (<% %> <: :> %:): left unchanged"
        return None

    def pragmas_in(self, root: Loop) -> str | None:
        """Why a #pragma in or before nest `root` keeps hints out of it, or None."""
        text = self.data[root.start:root.end]
        # Every `pragma` in the nest's text must be the OpenMP annotation of one of its
        # loops: any other (a directive on another statement, or one written with a
        # comment or a line splice after the `#`) would be split from its statement by
        # the hints, or change what the nest does.
        annotated = [(found[0], lp.start) for lp in _loops(root) if lp.omp is not None
                     and (found := pragmas.pragma_before(self.data, lp.start)) is not None]
        at = text.find(b"pragma")
        while at >= 0:
            if not any(b <= root.start + at < e for b, e in annotated):
                return "a #pragma inside the nest (OpenMP or similar): left unchanged"
            at = text.find(b"pragma", at + 1)
        if any(root.start <= b < root.end for b, _ in self.pragma_macros):
            return "a macro making a pragma inside the nest: left unchanged"
        # What comes right before the loop: the text on its line before it or, where that
        # is blank, the last line before it that is not blank or only a comment.
        start, end = self.data.rfind(b"\n", 0, root.start) + 1, root.start
        while start > 0 and not _code(self.data[start:end]):
            end = start - 1
            start = self.data.rfind(b"\n", 0, end) + 1
        lead = self.data[start:end]
        if root.omp is None and (b"pragma" in _code(lead).lower()
                                 or any(start <= b < end for b, _ in self.pragma_macros)
                                 or pragmas.pragma_before(self.data, root.start)):
            return "the nest follows a #pragma (OpenMP or similar): left unchanged"
        return None

    def fresh(self, block: ci.Cursor, nest: ci.Cursor, root: Loop) -> str | None:
        """Why a nest storing only into memory just allocated is left alone, or None."""
        found = first_touch(block, nest, {lp.start: lp.var for lp in _loops(root)},
                            self.v.plain_local)
        if found is None:
            return None
        line, names = found
        return (f"first touch of new memory (allocated at line {line}: {names}): it only "
                "stores into it, and the kernel gives such pages zero-filled, never "
                "read from storage; hints would only cost")

    def omp(self, start: int) -> OmpLoop | None:
        """The OpenMP annotation of the loop at offset `start`, if a `#pragma omp` is
        right above it."""
        found = pragmas.pragma_before(self.data, start)
        if found is None:
            return None
        at, text = found
        omp = pragmas.omp_loop(text, line_at(self.data, at))
        if omp is None:
            return None
        return replace(omp, repeatable=all(self.repeatable(t) for t in (omp.chunk,
                                                                         omp.num_threads) if t))

    def loop(self, c: ci.Cursor, depth: int, outer: dict[tuple, str], nest_start: int,
             conditional: bool = False) -> Loop | Refusal:
        """A Loop for a canonical counted for-statement, or why it is not one."""
        if file_offset(c.location)[0] != self.main:
            return Refusal("not in the file being compiled")
        start = start_of(c)
        if self.data[start:start + 3] != b"for":
            if re.match(rb"for(?![A-Za-z0-9_$])",
                        re.sub(rb"\\\r?\n", b"", self.data[start:start + 16])):
                return Refusal("its `for` is split by a backslash-newline")
            # the text is not where the AST says
            return Refusal("the loop comes from a macro expansion")
        parts = self.t.header_parts(c)
        if parts is None:
            return Refusal("the for header could not be read from the source text")
        lparen, semi1, semi2, rparen = parts
        init = cond = inc = body = None
        for ch in children(c):
            o = start_of(ch)
            if o < semi1:
                init = ch
            elif o < semi2:
                cond = ch
            elif o < rparen:
                inc = ch
            else:
                body = ch
        if body is None or cond is None or inc is None:
            return Refusal("no condition or no increment: not a counted loop")
        var_decl, lower = _loop_init(init)
        step_var, step = _loop_step(inc)
        if step_var is None or step is None or step == 0:
            return Refusal("the increment is not one variable stepped by a constant "
                           "(i++, i--, i += c)")
        if var_decl is not None and decl_key(var_decl) != decl_key(step_var):
            return Refusal(f"the loop initialises {var_decl.spelling} but steps "
                           f"{step_var.spelling}")
        var_decl = step_var
        kind = var_decl.type.get_canonical().kind
        key = decl_key(var_decl)
        if kind == ci.TypeKind.POINTER:
            size = var_decl.type.get_canonical().get_pointee().get_size()
            if size <= 0 or var_decl.type.is_volatile_qualified():
                return Refusal(f"the index {var_decl.spelling} is a pointer to objects "
                               "of unknown or variable size")
            step *= size    # bytes: the variable stands for (uintptr_t)p
            self.walks.add(key)
        elif kind not in INT_KINDS:
            return Refusal(f"the index {var_decl.spelling} is not an integer")
        name = var_decl.spelling
        if name in outer.values():
            return Refusal(f"the index {name} is also an enclosing loop's index")
        changed = _changed_in(body, key)
        if changed is not None:
            return Refusal(f"the index {name} is changed in the body (line {changed})")
        body_end = self.t.stmt_end(body)
        if body_end is None:
            return Refusal("the end of the body could not be found in the source text")
        clash = self.t.macro_clash(c, start, body, body_end)
        if clash is not None:
            return Refusal(clash)
        walk = key in self.walks
        lower_text = lower_aff = lower_sym = None
        if lower is not None and self.t.spelled(lower):
            lower_aff = self.v.affine(lower, outer, nest_start)
            if lower_aff is not None and not lower_aff.coeffs:
                lower_sym = lower_aff.const
            lower_text = self.t.text(lower)
        bound = self.cond(cond, key, outer, nest_start)
        op = bound.op if bound is not None else None
        if walk and op == "!=":
            # A pointer walk to `p != e` stops at e exactly (stepping past it is undefined).
            op = "<" if step > 0 else ">"
        upper_sym = None
        if bound is not None and bound.aff is not None and not bound.aff.coeffs:
            upper_sym = bound.aff.const
        bound_runtime = bound_fixed = bound_kept = False
        if bound is not None and op in ("<", "<=", ">", ">="):
            bound_runtime = self.v.plain_in(bound.bound, body)
            bound_fixed = bound_runtime and self.v.fixed_in_nest(bound.bound, nest_start)
            bound_kept = bound_runtime and self.v.kept_in(bound.bound, body)
        incr = self.data[semi2 + 1:rparen].decode("utf-8", "surrogateescape").strip()
        if any(m in incr for m in ("\n", "\r", "//", "/*", "\\")):
            incr = None
        body_exits = body_calls = float_math = False
        for d in preorder(body):
            if d.kind in _ARITHMETIC:
                float_math = float_math or (binary_operator(d) in _FLOAT_OPS and
                                            d.type.get_canonical().kind in _REORDERABLE)
            elif d.kind == K.CALL_EXPR and not float_math:
                # (`s = add(s, a[i])`: cc inlines the sum and may reorder it)
                float_math = d.type.get_canonical().kind in _REORDERABLE
            if d.kind in _JUMPS:
                body_exits = True
            elif d.kind == K.CALL_EXPR or runs_cleanup(d):
                if d.kind == K.CALL_EXPR and may_not_return(d):
                    body_exits = True
                if not (d.kind == K.CALL_EXPR and self.v.effects.unit.writes_nothing(d)):
                    body_calls = True
        found = _Body()
        self.body(body, depth, found, {**outer, key: name}, nest_start, conditional=False)
        low = sym_value(lower_sym) if lower_sym is not None else None
        return Loop(
            var=name, lower=lower_text, upper=bound.text if bound is not None else None,
            cond_op=op, step=step, line=c.location.line, depth=depth, start=start,
            end=body_end, body_start=start_of(body), body_end=body_end,
            body_compound=body.kind == K.COMPOUND_STMT,
            trip=_trip(lower_sym, upper_sym, step, op),
            lower_sym=lower_sym, upper_sym=upper_sym,
            bounds_invariant=bound is not None and bound.aff is not None,
            bound_runtime=bound_runtime, lower_aff=lower_aff,
            upper_aff=bound.aff if bound is not None else None,
            body_exits=body_exits, conditional=conditional, body_calls=body_calls,
            int_stores=self.v.effects.stores_other_than_float(start_of(body), body_end),
            float_math=float_math,
            bound_fixed=bound_fixed, bound_kept=bound_kept,
            csr=self.row_range(lower, bound, step, op, outer, nest_start),
            incr=incr, no_split=self._no_split(c, body, var_decl, bound, step, op, walk, low,
                                               incr),
            walk=walk, ops=found.ops, omp=self.omp(start), children=tuple(found.children),
            refs=tuple(found.refs), problems=tuple(found.problems))

    def _no_split(self, c: ci.Cursor, body: ci.Cursor, var: ci.Cursor, bound, step: int,
                  op: str | None, walk: bool, low: int | None, incr: str | None) -> str | None:
        """Why the loop's body cannot run in strips (rewrite/emit_stream.strip: an inner
        loop runs it N times, stepping the index by `incr`, with the iterations left
        computed from the bound at the top of the body), by what the front end sees;
        None when it can (schedule/plan.split_refusal adds the bounds' facts)."""
        if incr is None:
            return "its increment spans lines or holds a comment"
        if _breaks(body):
            return "a break leaves it"
        if any(d.kind == K.CALL_EXPR and d.spelling in _RETURNS_TWICE for d in preorder(body)):
            return ("its body calls setjmp (a strip's counter would be indeterminate after "
                    "a longjmp)")
        why = self._index_shared(var)
        if why is not None:
            return f"its index {var.spelling} {why}"
        if not _exact(var, bound, step, op, walk, low):
            return (f"its index {var.spelling} may wrap around or move away from its bound "
                    "(the iterations left would be miscounted)")
        start = start_of(c)
        if b"\n" in self.data[start:start_of(body) + 1] and any(
                t.kind == ci.TokenKind.IDENTIFIER and self.t.line_reading(t.spelling)
                for t in self.t.tokens(c) if t.start < start_of(body)):
            return "its header reads __LINE__ on another line than its body's first"
        return None

    def _index_shared(self, var: ci.Cursor) -> str | None:
        """Why something other than the loop's increment might change its index (between
        the tests a strip leaves out), or None: only a local that is not `static` or
        `volatile` and whose address is never taken is the loop's own."""
        if var.type.is_volatile_qualified():
            return "is volatile"
        local = var.semantic_parent is not None and var.semantic_parent.kind == K.FUNCTION_DECL
        if var.kind not in (K.VAR_DECL, K.PARM_DECL) or not local:
            return "is not a local variable"
        if var.storage_class == ci.StorageClass.STATIC:
            return "is a static local"
        if decl_key(var) in self.v.effects.address_taken:
            return "has its address taken"
        return None

    def cond(self, cond: ci.Cursor, key: tuple, outer: dict,
             nest_start: int) -> _Cond | None:
        """The loop condition `v OP bound` (or `bound OP v`), when its text can be
        repeated in hints."""
        cond = strip(cond)
        if cond.kind != K.BINARY_OPERATOR:
            return None
        op = binary_operator(cond)
        if op not in _FLIP:
            return None
        lhs, rhs = children(cond)
        ls, rs = strip(lhs), strip(rhs)
        if ls.kind == K.DECL_REF_EXPR and ls.referenced and decl_key(ls.referenced) == key:
            bound, var = rhs, ls
        elif rs.kind == K.DECL_REF_EXPR and rs.referenced and decl_key(rs.referenced) == key:
            bound, var, op = lhs, rs, _FLIP[op]
        else:
            return None
        # The comparison must not mix signedness in a way that changes its meaning, nor
        # be made in floating point (`i > lo`, lo a double: the hints' integer arithmetic
        # would convert a negative or huge value, undefined in C); the bound is repeated
        # in hints, so the file's text must spell it.  An unsigned index against a
        # constant that is not negative (`size_t k; k < 7`) means what it says.
        if is_unsigned(ls.type.get_canonical()) != is_unsigned(rs.type.get_canonical()):
            value = evaluate_int(strip(bound))
            if not (is_unsigned(var.type.get_canonical()) and value is not None
                    and value >= 0):
                return None
        if not self.t.spelled(bound) or strip(bound).type.get_canonical().kind in _FLOATING:
            return None
        return _Cond(op, bound, self.t.text(bound), self.v.affine(bound, outer, nest_start))

    def row_range(self, lower: ci.Cursor | None, bound: _Cond | None, step: int,
                  op: str | None, outer: dict[tuple, str],
                  nest_start: int) -> tuple[str, str, Affine] | None:
        """`for (k = R[i + c]; k < R[i + c + 1]; k++)`, the rows of a compressed sparse
        row matrix: R a base needing no load, the index affine with coefficient 1 in one
        enclosing loop variable i.  Returns (R, i, the upper index i + c + 1).  Across
        the iterations of i the rows' ranges chain (plan._csr_end); whether the row loop
        can change R's elements is its int_stores and body_calls."""
        if (lower is None or bound is None or step != 1
                or op != "<" or self.v.sync_in(nest_start) is not None):
            return None
        lo, hi = strip(lower), strip(bound.bound)
        if lo.kind != K.ARRAY_SUBSCRIPT_EXPR or hi.kind != K.ARRAY_SUBSCRIPT_EXPR:
            return None
        (lb, li), (hb, hix) = children(lo), children(hi)
        rows = self.refs.base(strip(lb), nest_start)
        rows_hi = self.refs.base(strip(hb), nest_start)
        if rows is None or rows != rows_hi or lo.type.get_canonical().kind not in INT_KINDS:
            return None
        a_lo, a_hi = self.v.affine(li, outer, nest_start), self.v.affine(hix, outer, nest_start)
        if a_lo is None or a_hi is None:
            return None
        diff = a_hi.plus(a_lo, -1)
        if diff.coeffs or sym_value(diff.const) != 1:
            return None
        ones = [v for v, c in a_lo.coeffs.items() if sym_value(c) == 1]
        if len(a_lo.coeffs) != 1 or len(ones) != 1:
            return None
        return rows, ones[0], a_hi

    def _is_ref_of(self, ref, lhs: ci.Cursor) -> bool:
        """Whether `ref` is the reference `lhs` makes: by its text, or, for one a macro's
        body makes (refs.py names it `CALL (base)`), by the call's text and its base's
        name."""
        if ref.text == self.t.text(lhs):
            return True
        b = lhs
        while b.kind == K.ARRAY_SUBSCRIPT_EXPR:
            b = strip(children(b)[0])
        return (b.kind == K.DECL_REF_EXPR and b.referenced is not None
                and ref.text == f"{self.t.text(lhs)} ({b.referenced.spelling})")

    def body(self, c: ci.Cursor, depth: int, found: _Body, loops: dict[tuple, str],
             nest_start: int, conditional: bool) -> None:
        """Collect the references of the loop at `depth` into `found`; inner for-loops
        become its children or new nests."""
        if c.kind == K.FOR_STMT:
            child = self.loop(c, depth + 1, loops, nest_start, conditional)
            if isinstance(child, Loop):
                found.children.append(child)
            else:
                found.problems.append(f"line {c.location.line}: inner loop not analysed "
                                      f"({child.why}): its references are not analysed")
                self.scan(c)
            return
        if c.kind in (K.WHILE_STMT, K.DO_STMT):
            found.problems.append(f"line {c.location.line}: while/do loop: its references "
                                  "are not analysed")
            self.scan(c)
            return
        if c.kind == K.UNARY_OPERATOR and unary_operator(c) == "*":
            ref = self.refs.dereference(c, loops, nest_start, conditional)
            if ref is not None:
                found.ops += sum(1 for d in preorder(c) if d.kind in _OPS)
                found.refs.append(ref)
                return
        if c.kind == K.MEMBER_REF_EXPR:
            ref = self.refs.walk_member(c, loops, conditional)
            if ref is not None:
                found.refs.append(ref)
                return
        if c.kind == K.ARRAY_SUBSCRIPT_EXPR:
            ref = self.refs.reference(c, loops, nest_start, conditional)
            if isinstance(ref, ArrayRef):
                found.ops += sum(1 for d in preorder(c) if d.kind in _OPS)
                found.refs.append(ref)
                ix = ref.indirect
                while ix is not None:   # a[c[b[i]]]: c[b[i]] and b[i] are read too
                    found.refs.append(ix)
                    ix = ix.indirect
                return
            what = self.t.text(c) if self.t.in_file(c) else "a reference"
            found.problems.append(f"line {c.location.line}: {what}: {ref}")
            # look for references inside the indices only
            sub = c
            while sub.kind == K.ARRAY_SUBSCRIPT_EXPR:
                base, idx = children(sub)
                self.body(idx, depth, found, loops, nest_start, conditional)
                sub = strip(base)
            return
        kids = children(c)
        if c.kind in _OPS:
            found.ops += 1
        if kids and _stores(c) and strip(kids[0]).kind in (K.ARRAY_SUBSCRIPT_EXPR,
                                                             K.UNARY_OPERATOR):
            # The reference the operator stores to (its indices' references are read).
            before = len(found.refs)
            self.body(kids[0], depth, found, loops, nest_start, conditional)
            lhs = strip(kids[0])
            if len(found.refs) > before and self.t.in_file(lhs) and \
                    self._is_ref_of(found.refs[before], lhs):
                found.refs[before] = replace(found.refs[before], is_write=True,
                                             also_read=not (c.kind == K.BINARY_OPERATOR))
            for k in kids[1:]:
                self.body(k, depth, found, loops, nest_start, conditional)
            return
        if c.kind in (K.IF_STMT, K.CONDITIONAL_OPERATOR):
            for i, k in enumerate(kids):
                self.body(k, depth, found, loops, nest_start, conditional or i > 0)
            return
        if c.kind == K.BINARY_OPERATOR and binary_operator(c) in ("&&", "||"):
            self.body(kids[0], depth, found, loops, nest_start, conditional)
            self.body(kids[1], depth, found, loops, nest_start, True)
            return
        cond_kids = conditional or c.kind in (K.SWITCH_STMT, K.CASE_STMT, K.DEFAULT_STMT,
                                              K.LABEL_STMT)
        for k in kids:
            self.body(k, depth, found, loops, nest_start, cond_kids)


def _stores(c: ci.Cursor) -> bool:
    """Whether operator `c` stores to its first operand (=, op=, ++, --)."""
    if c.kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
        return True
    if c.kind == K.BINARY_OPERATOR:
        return binary_operator(c) == "="
    return c.kind == K.UNARY_OPERATOR and unary_operator(c) in ("post++", "post--", "pre++",
                                                                "pre--")


def _loops(root: Loop) -> list[Loop]:
    out, stack = [], [root]
    while stack:
        lp = stack.pop()
        out.append(lp)
        stack.extend(lp.children)
    return out


def _changed_in(body: ci.Cursor, key: tuple) -> int | None:
    """The line of a statement in `body` that changes variable `key`, if any (a loop's
    index must change only in its increment)."""
    for d in preorder(body):
        if d.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR, K.UNARY_OPERATOR):
            written: set[tuple] = set()
            if d.kind == K.UNARY_OPERATOR:
                if unary_operator(d) in ("post++", "post--", "pre++", "pre--", "&"):
                    mark_variable(children(d)[0], written)
            elif binary_operator(d).endswith("=") and binary_operator(d) not in (
                    "==", "!=", "<=", ">="):
                mark_variable(children(d)[0], written)
            if key in written:
                return d.location.line
    return None


def _trip(lower: Sym | None, upper: Sym | None, s: int, op: str | None) -> int | None:
    """Constant trip count of a loop with constant bounds."""
    if lower is None or upper is None:
        return None
    lo, hi = sym_value(lower), sym_value(upper)
    if lo is None or hi is None:
        return None
    if s > 0 and op in ("<", "<=", "!="):
        last = hi - 1 if op in ("<", "!=") else hi
        return max(0, (last - lo) // s + 1)
    if s < 0 and op in (">", ">=", "!="):
        last = hi + 1 if op in (">", "!=") else hi
        return max(0, (lo - last) // (-s) + 1)
    return None


def _loop_init(init: ci.Cursor | None) -> tuple[ci.Cursor | None, ci.Cursor | None]:
    if init is None:
        return None, None
    if init.kind == K.DECL_STMT:
        decls = children(init)
        if len(decls) == 1 and decls[0].kind == K.VAR_DECL:
            kids = [k for k in children(decls[0]) if k.kind.is_expression()]
            return decls[0], (kids[-1] if kids else None)
        return None, None
    init = strip(init)
    if init.kind == K.BINARY_OPERATOR and binary_operator(init) == "=":
        lhs, rhs = children(init)
        lhs = strip(lhs)
        if lhs.kind == K.DECL_REF_EXPR:
            return lhs.referenced, rhs
    return None, None


def _loop_step(inc: ci.Cursor) -> tuple[ci.Cursor | None, int | None]:
    inc = strip(inc)
    kids = children(inc)
    if not kids:
        return None, None
    target = strip(kids[0])
    if target.kind != K.DECL_REF_EXPR:
        return None, None
    if inc.kind == K.UNARY_OPERATOR:
        op = unary_operator(inc)
        if op in ("post++", "pre++"):
            return target.referenced, 1
        if op in ("post--", "pre--"):
            return target.referenced, -1
    elif inc.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and len(kids) == 2:
        v = evaluate_int(kids[1])
        op = binary_operator(inc)
        if v is not None and op in ("+=", "-="):
            return target.referenced, v if op == "+=" else -v
    return None, None


_RETURNS_TWICE = {"setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp", "savectx",
                  "vfork", "getcontext"}


def _breaks(c: ci.Cursor) -> bool:
    """Whether a `break` below `c` leaves the loop whose body `c` is: one not in the body
    of a loop or switch of its own (in a nested loop's header or a switch's controlling
    expression, a GNU statement expression's `break` leaves this loop)."""
    order, start, end = subtree(c)
    skip: dict[int, int] = {}   # where the bodies below c start: where they end
    k = start + 1
    while k < end:
        if k in skip:
            k = skip[k]
            continue
        d = order[k]
        kind = d.kind
        if kind == K.BREAK_STMT:
            return True
        if kind in _BODIED:
            kids = children(d)
            if kids:
                listed, body, body_end = subtree(kids[0] if kind == K.DO_STMT else kids[-1])
                assert listed is order      # (one index_subtrees of the function)
                skip[body] = body_end
        k += 1
    return False


_BODIED = {K.FOR_STMT, K.WHILE_STMT, K.SWITCH_STMT, K.DO_STMT}


_SIGNED = {ci.TypeKind.SCHAR, ci.TypeKind.CHAR_S, ci.TypeKind.SHORT, ci.TypeKind.INT,
           ci.TypeKind.LONG, ci.TypeKind.LONGLONG}
_UNSIGNED = {ci.TypeKind.BOOL, ci.TypeKind.UCHAR, ci.TypeKind.CHAR_U, ci.TypeKind.USHORT,
             ci.TypeKind.UINT, ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG}


def _exact(var: ci.Cursor, bound, step: int, op: str | None, walk: bool,
           lower: int | None) -> bool:
    """Loop.exact: the loop stops exactly where its bounds say, whatever their values,
    and the iterations left computed from them in uintmax_t (rewrite/bounds.py) are the
    ones the loop runs: a pointer index (stepping past the bound is undefined), or a
    signed index of int's width or more (it overflows only with undefined behaviour) to
    a signed bound, or to an unsigned one counting up from a constant of 0 or more (the
    comparison's conversion keeps its value), or an unsigned index stepping ±1 to a
    strict unsigned bound no wider than it (it meets the bound before it could wrap).  A
    narrower index wraps legitimately; `k <= n` for an unsigned n may never end."""
    if bound is None or op not in ("<", "<=", ">", ">=") or (step > 0) != (op in ("<", "<=")):
        return False
    if walk:
        return True
    t = var.type.get_canonical()
    b = strip(bound.bound).type.get_canonical()
    if t.kind in (ci.TypeKind.INT, ci.TypeKind.LONG, ci.TypeKind.LONGLONG):
        return b.kind in _SIGNED or (b.kind in _UNSIGNED and step > 0
                                     and lower is not None and lower >= 0)
    return (t.kind in _UNSIGNED and t.kind != ci.TypeKind.BOOL and abs(step) == 1
            and op in ("<", ">") and b.kind in _UNSIGNED and 0 < b.get_size() <= t.get_size())


# Tokens that only a preprocessor directive or a macro definition holds (digraphs too).
_DIRECTIVE_TOKENS = {"#", "%:", "##", "%:%:"}


def _uncopyable(c: ci.Cursor, t: FunctionText) -> str | None:
    """Why the text of the nest at `c` cannot be compiled twice, as the hinted nest and
    its unhinted copy (rewrite/emit.py), with the same meaning; None when it can."""
    tokens = t.tokens(c)
    if any(k.kind == ci.TokenKind.PUNCTUATION and k.spelling in _DIRECTIVE_TOKENS
           for k in tokens) or b"??=" in t.data[start_of(c):end_of(c)]:
        return "a preprocessor directive inside the nest (an #include may expand once only)"
    if any(k.kind == ci.TokenKind.IDENTIFIER and t.unrepeatable(k.spelling) for k in tokens):
        return ("__COUNTER__ or _Pragma read inside the nest, itself or through a macro "
                "(a copy would count on, or act twice)")
    for d in preorder(c):
        if d.kind == K.VAR_DECL and d.storage_class == ci.StorageClass.STATIC:
            return (f"a static local ({d.spelling}, line {d.location.line}): a copy would "
                    "be a second object")
        if d.kind in (K.ASM_STMT, K.MS_ASM_STMT):
            return f"an asm statement (line {d.location.line}): its labels would be defined twice"
        if d.kind == K.FUNCTION_DECL and d.is_definition():
            return f"a nested function ({d.spelling}, line {d.location.line})"
    return None


def _jump_target(c: ci.Cursor, in_switch: bool) -> str | None:
    """A label below `c` that a jump from outside `c` could reach: any `goto` label, and a
    `case`/`default` not enclosed by a switch below `c` (Duff's device)."""
    order, start, end = subtree(c)
    switches: list[int] = []    # where the switches below c around the cursor end
    for k in range(start + 1, end):
        while switches and switches[-1] <= k:
            switches.pop()
        d = order[k]
        kind = d.kind
        if kind == K.LABEL_STMT:
            return (f"a label inside the nest ({d.spelling}, line {d.location.line}): a "
                    "goto into it would skip nest entry")
        if kind in (K.CASE_STMT, K.DEFAULT_STMT) and not (in_switch or switches):
            return (f"a case label inside the nest (line {d.location.line}) of a switch "
                    "outside it: the switch would jump past nest entry")
        if kind == K.SWITCH_STMT:
            listed, _, switch_end = subtree(d)
            assert listed is order
            switches.append(switch_end)
    return None


