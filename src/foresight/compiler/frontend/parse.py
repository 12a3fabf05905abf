"""Parse a C file with libclang and build the loop-nest IR.

What the front end cannot model (while loops, pointer walks over objects of unknown
size, bases needing more than one load, non-affine indices, loops produced by macros,
OpenMP pragmas) is recorded as a problem on the loop or nest, and the rewrite leaves it
untouched.
"""

from __future__ import annotations

import subprocess
from bisect import bisect_left
from functools import cache
from pathlib import Path

import clang.cindex as ci

from foresight.compiler.analysis.effects import Effects
from foresight.compiler.frontend.cshim import binary_operator, evaluate_int, unary_operator
from foresight.compiler.frontend.cursors import decl_key, mark_variable, strip
from foresight.compiler.frontend.sync import SyncPoints
from foresight.compiler.ir import (
    Affine,
    ArrayRef,
    Loop,
    LoopNest,
    Sym,
    sym_add,
    sym_atom,
    sym_const,
    sym_mul,
    sym_value,
)
from foresight.compiler.options import decode_source

K = ci.CursorKind
_FLOAT_KINDS = {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE}
_INT_KINDS = {
    ci.TypeKind.BOOL, ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.USHORT,
    ci.TypeKind.UINT, ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG, ci.TypeKind.CHAR_S,
    ci.TypeKind.SCHAR, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
    ci.TypeKind.LONGLONG,
}
_ARRAY_KINDS = {ci.TypeKind.CONSTANTARRAY, ci.TypeKind.VARIABLEARRAY,
                ci.TypeKind.INCOMPLETEARRAY}
_JUMPS = {K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT, K.RETURN_STMT, K.INDIRECT_GOTO_STMT}
_OPS = {K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR, K.UNARY_OPERATOR,
        K.ARRAY_SUBSCRIPT_EXPR, K.CALL_EXPR, K.CONDITIONAL_OPERATOR}
_NORETURN = {"exit", "_Exit", "abort", "quick_exit", "longjmp", "siglongjmp", "_longjmp"}


class ParseFailure(Exception):
    """libclang could not parse the file: it is compiled unchanged."""


@cache
def _builtin_headers() -> list[str]:
    """Where libclang finds the compiler's own headers (stddef.h, stdatomic.h, ...), which
    the libclang wheel lacks: clang's, from Debian's libclang-common-N-dev (installed by
    `make setup`; a version no newer than the wheel's, whose builtins it knows), else
    gcc's (whose <stdatomic.h> clang cannot parse)."""
    found = []
    for inc in Path("/usr/lib").glob("llvm-*/lib/clang/*/include/stdatomic.h"):
        try:
            found.append((int(inc.parent.parent.name.split(".")[0]), inc.parent.parent))
        except ValueError:
            continue
    if found:
        mine = _libclang_major()
        older = [f for f in found if f[0] <= mine]
        return ["-resource-dir", str(max(older)[1] if older else min(found)[1])]
    try:
        out = subprocess.run(["cc", "-print-file-name=include"], capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return []
    return ["-isystem", out] if out and Path(out).is_dir() else []


def _libclang_major() -> int:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("libclang").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 1 << 30


def parse(source: Path, clang_args: list[str]) -> tuple[list[LoopNest], bytes, list[int]]:
    """All loop nests of `source`, its bytes (offsets in the IR index into them) and
    where_header's places for the runtime's header."""
    data = Path(source).read_bytes()
    args = ["-x", "c", *clang_args, *_builtin_headers(), "-Wno-everything"]
    try:
        # `./-x.c` is `-x.c` as a Path, which libclang would take for an option.
        name = str(source) if not str(source).startswith("-") else f"./{source}"
        tu = ci.Index.create().parse(name, args=args,
                                     options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    except ci.TranslationUnitLoadError as e:
        raise ParseFailure(f"{source}: libclang could not load the file: {e}") from e
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        d = errors[0]
        loc = f"{d.location.file}:{d.location.line}" if d.location.file else str(source)
        raise ParseFailure(f"{loc}: libclang cannot parse this file ({d.spelling})")
    main = str(tu.spelling)
    nests: list[LoopNest] = []
    top = list(tu.cursor.get_children())
    # Byte ranges of the macro expansions in this file: the text there is not the code.
    macros = sorted((c.extent.start.offset, c.extent.end.offset) for c in top
                    if c.kind == K.MACRO_INSTANTIATION and c.location.file
                    and str(c.location.file) == main)
    counting = _counting_macros(tu, top, data)
    sync = SyncPoints({fn.get_usr(): fn for fn in top
                       if fn.kind == K.FUNCTION_DECL and fn.is_definition()})
    for fn in top:
        if (fn.kind == K.FUNCTION_DECL and fn.is_definition() and fn.location.file
                and str(fn.location.file) == main):
            _Function(fn, data, main, nests, macros, sync, counting).scan(fn)
    return nests, data, _header_places(top, data, main)


_FEATURE_MACROS = {"_FILE_OFFSET_BITS", "_TIME_BITS", "_FORTIFY_SOURCE", "_REENTRANT",
                   "_THREAD_SAFE"}


def _header_places(top: list[ci.Cursor], data: bytes, main: str) -> list[int]:
    """Where the runtime's header may be included instead of the file's first line: the
    starts of the lines after the #include directives at file scope, when the user's
    files define a feature test macro (`#define _GNU_SOURCE`, `_FILE_OFFSET_BITS`): the
    header includes <stdint.h>, and the C library reads those macros once, at its first
    header (included first, it left memmem() undeclared and off_t 32 bits).  Empty:
    the first line will do."""
    if not any(c.kind == K.MACRO_DEFINITION and not c.location.is_in_system_header
               and c.location.file is not None and (
                   c.spelling in _FEATURE_MACROS or c.spelling.startswith("__STDC_WANT_")
                   or (c.spelling.startswith("_") and c.spelling.endswith("_SOURCE")))
               for c in top):
        return []
    mine = [c for c in top if c.location.file is not None and str(c.location.file) == main]
    code = [(c.extent.start.offset, c.extent.end.offset) for c in mine
            if c.kind not in (K.INCLUSION_DIRECTIVE, K.MACRO_DEFINITION,
                              K.MACRO_INSTANTIATION)]
    places = []
    for c in mine:
        if c.kind != K.INCLUSION_DIRECTIVE:
            continue
        end = c.extent.end.offset
        if any(s <= end <= e for s, e in code):
            continue   # an #include inside a declaration or a function (X-macros)
        nl = data.find(b"\n", end)
        rest = data[end:nl if nl >= 0 else len(data)]
        if nl < 0 or b"/*" in rest or rest.rstrip().endswith(b"\\") or (
                rest.strip() and not rest.strip().startswith(b"//")):
            continue   # a comment or a continued line would take the next line in
        places.append(nl + 1)
    return places


def _counting_macros(tu: ci.TranslationUnit, top: list[ci.Cursor], data: bytes) -> set[str]:
    """`__COUNTER__` and the names of the macros whose expansion reads it: text holding
    one of them gives another value each time it is repeated, and repeating it in a hint
    would change the values the program's own later uses get."""
    seen = b"__COUNTER__" in data
    for inc in tu.get_includes():
        if seen:
            break
        try:
            seen = b"__COUNTER__" in Path(str(inc.include)).read_bytes()
        except OSError:
            seen = True
    if not seen:
        return set()
    bodies: dict[str, set[str]] = {}
    for c in top:
        if c.kind == K.MACRO_DEFINITION:
            words = {t.spelling for t in c.get_tokens()
                     if t.kind == ci.TokenKind.IDENTIFIER} - {c.spelling}
            bodies.setdefault(c.spelling, set()).update(words)
    counting = {"__COUNTER__"}
    grew = True
    while grew:
        more = {name for name, words in bodies.items() if words & counting} - counting
        counting |= more
        grew = bool(more)
    return counting


class _Function:
    """Facts about one function that decide what is loop-invariant, and the nest builder."""

    def __init__(self, fn: ci.Cursor, data: bytes, main: str, nests: list[LoopNest],
                 macros: list[tuple[int, int]], sync: SyncPoints,
                 counting: set[str] | frozenset[str] = frozenset()):
        self.fn, self.data, self.main, self.nests = fn, data, main, nests
        self.macros = macros
        self.counting = counting    # _counting_macros: text holding them is never repeated
        self._cursors: list[tuple[int, int]] | None = None  # (start, hash), by start
        self._parents: dict[int, tuple[int, int]] | None = None
        self._constant_stores: dict[tuple[int, tuple], tuple[int, int, int]] | None = None
        self.nest_end: dict[int, int] = {}      # nest start offset -> end offset
        self.expanding: set[tuple] = set()      # locals being replaced by their initializer
        # Pointer-walk loop variables (`for (p = a; p < e; p++)`): their value, taken as
        # (uintptr_t)p, is the address itself, so they step by the object's size in bytes.
        self.walks: set[tuple] = set()
        # What the function writes, calls and synchronises on (analysis/effects.py).
        self.effects = Effects(fn, sync, main, includes=b"include" in data[
            fn.extent.start.offset:fn.extent.end.offset])

    # ---- invariance -------------------------------------------------------------

    def invariant_var(self, decl: ci.Cursor, nest_start: int) -> bool:
        """A variable whose value cannot change while the nest runs."""
        return self.effects.invariant(decl, nest_start,
                                      self.nest_end.get(nest_start, len(self.data)))

    # ---- statements -------------------------------------------------------------

    def scan(self, c: ci.Cursor) -> None:
        """Find outermost analysable for-loops below `c` and build a nest for each."""
        for ch in c.get_children():
            if ch.kind == K.FOR_STMT:
                self.nest_end[ch.extent.start.offset] = ch.extent.end.offset
                loop = self.loop(ch, depth=0, outer={}, nest_start=ch.extent.start.offset)
                if loop is None:
                    self.unanalysed(ch, self.refusal)
                    self.scan(ch)
                    continue
                nest = LoopNest(function=self.fn.spelling, root=loop, file=self.main)
                self.check_nest(nest, ch)
                self.nests.append(nest)
            elif ch.kind in (K.WHILE_STMT, K.DO_STMT):
                self.unanalysed(ch, "a while or do loop: only counted for-loops are analysed")
                self.scan(ch)
            elif ch.kind.name.startswith("OMP_"):
                # Under -fopenmp libclang hides the directive's statement (a captured
                # statement): nothing inside is seen, so nothing inside is changed.
                self.unanalysed(ch, "an OpenMP directive (compiled with -fopenmp): the code "
                                "under it is left unchanged", inside=False)
            else:
                self.scan(ch)

    def unanalysed(self, c: ci.Cursor, why: str, inside: bool = True) -> None:
        """Record an outermost loop of this file that is left unchanged, for the report
        (with `inside`, loops inside it may still become nests of their own)."""
        if c.location.file is None or str(c.location.file) != self.main:
            return
        if inside and any(d.kind in (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)
                          for d in c.walk_preorder() if d != c):
            why += "; the loops inside it are looked at on their own"
        self.nests.append(LoopNest(function=self.fn.spelling, root=None, file=self.main,
                                   skipped=why, unanalysed_line=c.location.line))

    def check_nest(self, nest: LoopNest, cursor: ci.Cursor) -> None:
        start, end = nest.root.start, nest.root.end
        jump = _jump_target(cursor, in_switch=False)
        if jump is not None:
            # A jump from outside would enter the nest without the values taken at entry
            # (uninitialised hint variables; -Wjump-misses-init).
            nest.skipped = jump
            return
        text = self.data[start:end]
        if (b"#" in text and b"pragma" in text) or b"_Pragma" in text:
            nest.skipped = "a #pragma inside the nest (OpenMP or similar): left unchanged"
            return
        line_start = self.data.rfind(b"\n", 0, start)
        prev = self.data[:max(line_start, 0)].rstrip().rsplit(b"\n", 1)[-1].strip()
        if (prev.startswith(b"#") and b"pragma" in prev) or b"_Pragma" in prev:
            nest.skipped = "the nest follows a #pragma (OpenMP or similar): left unchanged"

    def header_parts(self, c: ci.Cursor) -> tuple[int, int, int, int] | None:
        """Byte offsets of '(' ';' ';' ')' of a for statement, checked against the text."""
        toks = list(c.get_tokens())
        if len(toks) < 5 or toks[0].spelling != "for" or toks[1].spelling != "(":
            return None
        depth, semis, lparen = 0, [], toks[1].extent.start.offset
        for t in toks[1:]:
            s = t.spelling
            if s in ("(", "[", "{"):
                depth += 1
            elif s in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    if len(semis) != 2:
                        return None
                    rparen = t.extent.start.offset
                    offs = (lparen, semis[0], semis[1], rparen)
                    ok = all(self.data[o:o + 1] in (b"(", b";", b")") for o in offs)
                    return offs if ok else None
            elif s == ";" and depth == 1:
                semis.append(t.extent.start.offset)
        return None

    def stmt_end(self, c: ci.Cursor) -> int | None:
        """Offset just past statement `c`, including the ';' the extent leaves out."""
        end = c.extent.end.offset
        if c.kind in (K.COMPOUND_STMT,) or self.data[end - 1:end] in (b";", b"}"):
            return end
        i = end
        while i < len(self.data) and self.data[i:i + 1] in (b" ", b"\t", b"\n", b"\r"):
            i += 1
        return i + 1 if self.data[i:i + 1] == b";" else None

    def loop(self, c: ci.Cursor, depth: int, outer: dict[tuple, str],
             nest_start: int) -> Loop | None:
        """A Loop for a canonical counted for-statement, or None with the reason in
        self.refusal."""
        self.refusal = "not in the file being compiled"
        if c.location.file is None or str(c.location.file) != self.main:
            return None
        start = c.extent.start.offset
        if self.data[start:start + 3] != b"for":
            # the text is not where the AST says
            return self._refuse("the loop comes from a macro expansion")
        parts = self.header_parts(c)
        if parts is None:
            return self._refuse("the for header could not be read from the source text")
        lparen, semi1, semi2, rparen = parts
        init = cond = inc = body = None
        for ch in c.get_children():
            o = ch.extent.start.offset
            if o < semi1:
                init = ch
            elif o < semi2:
                cond = ch
            elif o < rparen:
                inc = ch
            else:
                body = ch
        if body is None or cond is None or inc is None:
            return self._refuse("no condition or no increment: not a counted loop")
        var_decl, lower = self.loop_init(init)
        step_var, step = self.loop_step(inc)
        if step_var is None or step is None or step == 0:
            return self._refuse("the increment is not one variable stepped by a constant "
                                "(i++, i--, i += c)")
        if var_decl is not None and decl_key(var_decl) != decl_key(step_var):
            return self._refuse(f"the loop initialises {var_decl.spelling} but steps "
                                f"{step_var.spelling}")
        var_decl = step_var
        kind = var_decl.type.get_canonical().kind
        key = decl_key(var_decl)
        if kind == ci.TypeKind.POINTER:
            size = var_decl.type.get_canonical().get_pointee().get_size()
            if size <= 0 or var_decl.type.is_volatile_qualified():
                return self._refuse(f"the index {var_decl.spelling} is a pointer to objects "
                                    "of unknown or variable size")
            step *= size    # bytes: the variable stands for (uintptr_t)p
            self.walks.add(key)
        elif kind not in _INT_KINDS:
            return self._refuse(f"the index {var_decl.spelling} is not an integer")
        name = var_decl.spelling
        if name in outer.values():
            return self._refuse(f"the index {name} is also an enclosing loop's index")
        # The index must change only in the increment.
        for d in body.walk_preorder():
            if d.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR, K.UNARY_OPERATOR):
                written = set()
                if d.kind == K.UNARY_OPERATOR:
                    if unary_operator(d) in ("post++", "post--", "pre++", "pre--", "&"):
                        mark_variable(next(d.get_children()), written)
                elif binary_operator(d).endswith("=") and binary_operator(d) not in (
                        "==", "!=", "<=", ">="):
                    mark_variable(next(d.get_children()), written)
                if key in written:
                    return self._refuse(f"the index {name} is changed in the body "
                                        f"(line {d.location.line})")
        body_end = self.stmt_end(body)
        if body_end is None:
            return self._refuse("the end of the body could not be found in the source text")
        clash = self.macro_clash(c, start, body, body_end)
        if clash is not None:
            return self._refuse(clash)
        loop = Loop(var=name, lower=None, upper=None, cond_op=None, step=step,
                    line=c.location.line, depth=depth, start=start, end=body_end,
                    body_start=body.extent.start.offset, body_end=body_end,
                    body_compound=body.kind == K.COMPOUND_STMT, walk=key in self.walks)
        inner_outer = {**outer, key: name}
        if lower is not None and self.spelled(lower):
            aff = self.affine(lower, outer, nest_start)
            loop.lower_aff = aff
            if aff is not None and not aff.coeffs:
                loop.lower_sym = aff.const
            loop.lower = self.text(lower)
        self._bound = None
        self.loop_cond(loop, cond, key, outer, nest_start)
        if loop.walk and loop.cond_op == "!=" and loop.step:
            # A pointer walk to `p != e` stops at e exactly (stepping past it is undefined).
            loop.cond_op = "<" if loop.step > 0 else ">"
        loop.csr = self.row_range(lower, loop, outer, nest_start)
        loop.trip = _trip(loop)
        if self._bound is not None and loop.cond_op in ("<", "<=", ">", ">="):
            loop.bound_runtime = self.plain_in(self._bound, body)
            loop.bound_fixed = loop.bound_runtime and self.fixed_in_nest(self._bound,
                                                                         nest_start)
        loop.int_stores = any(body.extent.start.offset <= o < body_end
                              and t not in _FLOAT_KINDS for o, t in self.effects.memory_stores)
        for d in body.walk_preorder():
            if d.kind in _JUMPS:
                loop.body_exits = True
            elif d.kind == K.CALL_EXPR:
                loop.body_calls = True
                if d.spelling in _NORETURN:
                    loop.body_exits = True
        self.body(body, loop, inner_outer, nest_start, conditional=False)
        return loop

    def _refuse(self, why: str) -> None:
        self.refusal = why
        return None

    def macro_clash(self, c: ci.Cursor, start: int, body: ci.Cursor,
                    body_end: int) -> str | None:
        """Why the loop's text cannot be edited as the compiler sees it, or None.

        Hints are spliced into the text before the loop, at the top of its body and after
        it (wrapping an unbraced body in braces).  That keeps the meaning only if those
        places are in the file's own text, not inside a macro expansion, and if the text
        from `for` to the end of the body holds this loop and nothing else: with
        `#define BUMP(i) A[i] += 1; C[i] += 2`, `for (...) BUMP(k);` loops over the first
        statement only, while the text `BUMP(k);` holds both."""
        lo = bisect_left(self.macros, (start, -1))
        while lo > 0 and self.macros[lo - 1][1] > start:
            lo -= 1
        hi = bisect_left(self.macros, (body_end, -1))
        near = [m for m in self.macros[lo:hi] if m[1] > start]
        if not near:
            return None
        body_start = body.extent.start.offset
        edges = (start, body_start, body_start + 1, body_end) if body.kind == K.COMPOUND_STMT \
            else (start, body_start, body_end)
        if body.kind == K.COMPOUND_STMT and (self.data[body_start:body_start + 1] != b"{"
                                             or self.data[body_end - 1:body_end] != b"}"):
            return "the braces of the loop body come from a macro expansion"
        for s, e in near:
            if any(s < o < e for o in edges) or (body.kind == K.COMPOUND_STMT and any(
                    s <= o < e for o in (body_start, body_end - 1))):
                return (f"the loop is written across a macro expansion (line "
                        f"{c.location.line}): its text is not the code the compiler sees")
        if body.kind == K.COMPOUND_STMT:
            return None
        # An unbraced body touching a macro: every statement the text holds must be the
        # loop's own.
        mine = {d.hash for d in c.walk_preorder()}
        cursors = self.cursors()
        i = bisect_left(cursors, (start, -1))
        while i < len(cursors) and cursors[i][0] < body_end:
            if cursors[i][1] not in mine:
                return ("the loop body comes from a macro that expands to more than the "
                        f"loop's statement (line {c.location.line}): wrapping its text "
                        "would change what the loop runs")
            i += 1
        return None

    def spelled(self, c: ci.Cursor) -> bool:
        """Whether the file's text at `c`'s extent spells `c`, so hints may repeat it.

        Code a macro's body produces is located at the whole call (`BODY(k)`): the call's
        text spells only the outermost expression the call makes (`u(i,j)` for
        `#define u(i,j) u_[(i)*n+(j)]`), not the parts of it (`A[r][k]` of `#define
        BODY(k) { s += A[r][k]; }`, whose hints would run the body again).  Text
        containing whole calls spells itself, unless it reads __COUNTER__ (repeating it
        would change the values of later uses)."""
        if not self.in_file(c) or self.reads_counter(c):
            return False
        cs, ce = c.extent.start.offset, c.extent.end.offset
        lo = bisect_left(self.macros, (cs, -1))
        while lo > 0 and self.macros[lo - 1][1] > cs:
            lo -= 1
        for s, e in self.macros[lo:bisect_left(self.macros, (ce, -1))]:
            if e <= cs or (cs <= s and e <= ce and (cs, ce) != (s, e)) or (s < cs and ce < e):
                continue
            if (cs, ce) != (s, e) or self.parents().get(c.hash) == (s, e):
                return False
        return True

    def in_file(self, c: ci.Cursor) -> bool:
        """Whether `c`'s extent is a non-empty range of this file: code from a macro
        call's arguments has an empty extent at the call (`N` of `COND(i, N)`), code from
        an #include'd file offsets into that file."""
        return c.extent.end.offset > c.extent.start.offset and all(
            x.file is not None and str(x.file) == self.main
            for x in (c.extent.start, c.extent.end))

    def reads_counter(self, c: ci.Cursor) -> bool:
        """Whether the text at `c` (in_file) reads __COUNTER__, itself or through a
        macro."""
        return bool(self.counting) and any(t.spelling in self.counting
                                           for t in self.tokens(c))

    def parents(self) -> dict[int, tuple[int, int]]:
        """Cursor hash -> its parent's extent, for the cursors of this function."""
        if self._parents is None:
            self._parents = {}
            stack = [self.fn]
            while stack:
                p = stack.pop()
                ext = (p.extent.start.offset, p.extent.end.offset)
                for k in p.get_children():
                    self._parents[k.hash] = ext
                    stack.append(k)
        return self._parents

    def cursors(self) -> list[tuple[int, int]]:
        """(start offset, hash) of every cursor of the function in this file, by offset."""
        if self._cursors is None:
            self._cursors = sorted(
                (d.extent.start.offset, d.hash) for d in self.fn.walk_preorder()
                if d.location.file is not None and str(d.location.file) == self.main)
        return self._cursors

    def sync_in(self, nest_start: int) -> str | None:
        """The first point in the nest where it may synchronise with other threads."""
        return self.effects.sync_in(nest_start, self.nest_end.get(nest_start, len(self.data)))

    def loop_init(self, init: ci.Cursor | None) -> tuple[ci.Cursor | None, ci.Cursor | None]:
        if init is None:
            return None, None
        if init.kind == K.DECL_STMT:
            decls = list(init.get_children())
            if len(decls) == 1 and decls[0].kind == K.VAR_DECL:
                kids = [k for k in decls[0].get_children() if k.kind.is_expression()]
                return decls[0], (kids[-1] if kids else None)
            return None, None
        init = strip(init)
        if init.kind == K.BINARY_OPERATOR and binary_operator(init) == "=":
            lhs, rhs = list(init.get_children())
            lhs = strip(lhs)
            if lhs.kind == K.DECL_REF_EXPR:
                return lhs.referenced, rhs
        return None, None

    def loop_step(self, inc: ci.Cursor) -> tuple[ci.Cursor | None, int | None]:
        inc = strip(inc)
        kids = list(inc.get_children())
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

    def loop_cond(self, loop: Loop, cond: ci.Cursor, key: tuple, outer: dict,
                  nest_start: int) -> None:
        cond = strip(cond)
        if cond.kind != K.BINARY_OPERATOR:
            return
        op = binary_operator(cond)
        flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
        if op not in flip:
            return
        lhs, rhs = list(cond.get_children())
        ls, rs = strip(lhs), strip(rhs)
        if ls.kind == K.DECL_REF_EXPR and ls.referenced and decl_key(ls.referenced) == key:
            bound = rhs
        elif rs.kind == K.DECL_REF_EXPR and rs.referenced and decl_key(rs.referenced) == key:
            bound, op = lhs, flip[op]
        else:
            return
        # The comparison must not mix signedness in a way that changes its meaning; the
        # bound is repeated in hints, so the file's text must spell it.
        if _is_unsigned(cond_type(ls)) != _is_unsigned(cond_type(rs)) or \
                not self.spelled(bound):
            return
        loop.cond_op = op
        loop.upper = self.text(bound)
        self._bound = bound
        aff = self.affine(bound, outer, nest_start)
        if aff is not None:
            loop.upper_sym = aff.const if not aff.coeffs else None
            loop.bounds_invariant = True
            loop.upper_aff = aff

    def row_range(self, lower: ci.Cursor | None, loop: Loop, outer: dict[tuple, str],
                  nest_start: int) -> tuple[str, str, Affine] | None:
        """`for (k = R[i + c]; k < R[i + c + 1]; k++)`, the rows of a compressed sparse
        row matrix: R a base needing no load, the index affine with coefficient 1 in one
        enclosing loop variable i.  Returns (R, i, the upper index i + c + 1).  Across
        the iterations of i the rows' ranges chain (plan._csr_end); whether the row loop
        can change R's elements is its int_stores and body_calls."""
        if (lower is None or self._bound is None or loop.step != 1
                or loop.cond_op != "<" or self.sync_in(nest_start) is not None):
            return None
        lo, hi = strip(lower), strip(self._bound)
        if lo.kind != K.ARRAY_SUBSCRIPT_EXPR or hi.kind != K.ARRAY_SUBSCRIPT_EXPR:
            return None
        (lb, li), (hb, hix) = list(lo.get_children()), list(hi.get_children())
        rows, rows_hi = self.base(strip(lb), nest_start), self.base(strip(hb), nest_start)
        if rows is None or rows != rows_hi or lo.type.get_canonical().kind not in _INT_KINDS:
            return None
        a_lo, a_hi = self.affine(li, outer, nest_start), self.affine(hix, outer, nest_start)
        if a_lo is None or a_hi is None:
            return None
        step = a_hi.plus(a_lo, -1)
        if step.coeffs or sym_value(step.const) != 1:
            return None
        ones = [v for v, c in a_lo.coeffs.items() if sym_value(c) == 1]
        if len(a_lo.coeffs) != 1 or len(ones) != 1:
            return None
        return rows, ones[0], a_hi

    def plain_in(self, expr: ci.Cursor, body: ci.Cursor) -> bool:
        """`expr` can be evaluated again at any iteration of the loop with `body` and
        gives the loop's own value: integer arithmetic on non-volatile local variables
        and parameters whose address is not taken and which the body does not write, on
        globals and statics nothing in the body may change (analysis/effects.py), and
        on members of them (`g->m`, `s.n`) that the body does not assign."""
        used: set[tuple] = set()
        lo, hi = body.extent.start.offset, body.extent.end.offset
        for d in expr.walk_preorder():
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
        for d in expr.walk_preorder():
            if d.kind == K.DECL_REF_EXPR and (d.referenced is None
                                              or not self.invariant_var(d.referenced,
                                                                        nest_start)):
                return False
            if d.kind == K.MEMBER_REF_EXPR and any(
                    lo <= w < hi for w in self.effects.member_writes.get(d.spelling, ())):
                return False
        return True

    def text(self, c: ci.Cursor) -> str:
        """`c` as C to repeat in a one-line insertion (and to show in the report): its
        tokens as written, one space wherever the source has white space, a comment or a
        line break between two, so a `//` comment or a newline inside never reaches the
        inserted line."""
        start, end = c.extent.start.offset, c.extent.end.offset
        out, last = [], None
        for t in self.tokens(c):
            o = t.extent.start.offset
            if last is not None and o > last:
                out.append(" ")
            out.append(t.spelling.replace("\\\n", "").replace("\\\r\n", ""))
            last = t.extent.end.offset
        if not out:
            return decode_source(self.data[start:end])
        return "".join(out)

    def tokens(self, c: ci.Cursor) -> list[ci.Token]:
        """The file's own tokens in `c`'s extent, comments left out (a cursor's
        get_tokens would start at a macro's definition when the expression begins with a
        macro)."""
        start, end = c.extent.start.offset, c.extent.end.offset
        tu = c.translation_unit
        here = tu.get_file(self.main)
        span = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, here, start),
                                             ci.SourceLocation.from_offset(tu, here, end))
        return [t for t in tu.get_tokens(extent=span)
                if t.extent.start.offset < end and t.kind != ci.TokenKind.COMMENT]

    # ---- bodies and references -----------------------------------------------------

    def body(self, c: ci.Cursor, loop: Loop, loops: dict[tuple, str], nest_start: int,
             conditional: bool) -> None:
        """Collect `loop`'s references; inner for-loops become children or new nests."""
        if c.kind == K.FOR_STMT:
            child = self.loop(c, loop.depth + 1, loops, nest_start)
            if child is not None:
                child.conditional = conditional
                loop.children.append(child)
            else:
                loop.problems.append(f"line {c.location.line}: inner loop not analysed "
                                     f"({self.refusal}): its references are not analysed")
                self.scan(c)
            return
        if c.kind in (K.WHILE_STMT, K.DO_STMT):
            loop.problems.append(f"line {c.location.line}: while/do loop: its references are "
                                 "not analysed")
            self.scan(c)
            return
        if c.kind == K.UNARY_OPERATOR and unary_operator(c) == "*":
            ref = self.dereference(c, loops, nest_start, conditional)
            if ref is not None:
                loop.ops += sum(1 for d in c.walk_preorder() if d.kind in _OPS)
                loop.refs.append(ref)
                return
        if c.kind == K.MEMBER_REF_EXPR:
            ref = self.walk_member(c, loops, conditional)
            if ref is not None:
                loop.refs.append(ref)
                return
        if c.kind == K.ARRAY_SUBSCRIPT_EXPR:
            ref = self.reference(c, loops, nest_start, conditional)
            if isinstance(ref, ArrayRef):
                loop.ops += sum(1 for d in c.walk_preorder() if d.kind in _OPS)
                loop.refs.append(ref)
                ix = ref.indirect
                while ix is not None:   # a[c[b[i]]]: c[b[i]] and b[i] are read too
                    loop.refs.append(ix)
                    ix = ix.indirect
                return
            what = self.text(c) if self.in_file(c) else "a reference"
            loop.problems.append(f"line {c.location.line}: {what}: {ref}")
            # look for references inside the indices only
            sub = c
            while sub.kind == K.ARRAY_SUBSCRIPT_EXPR:
                base, idx = list(sub.get_children())
                self.body(idx, loop, loops, nest_start, conditional)
                sub = strip(base)
            return
        kids = list(c.get_children())
        if c.kind in _OPS:
            loop.ops += 1
        if c.kind == K.IF_STMT:
            for i, k in enumerate(kids):
                self.body(k, loop, loops, nest_start, conditional or i > 0)
            return
        if c.kind == K.CONDITIONAL_OPERATOR:
            for i, k in enumerate(kids):
                self.body(k, loop, loops, nest_start, conditional or i > 0)
            return
        if c.kind == K.BINARY_OPERATOR and binary_operator(c) in ("&&", "||"):
            self.body(kids[0], loop, loops, nest_start, conditional)
            self.body(kids[1], loop, loops, nest_start, True)
            return
        cond_kids = conditional or c.kind in (K.SWITCH_STMT, K.CASE_STMT, K.DEFAULT_STMT,
                                              K.LABEL_STMT)
        for k in kids:
            self.body(k, loop, loops, nest_start, cond_kids)

    def reference(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int,
                  conditional: bool) -> ArrayRef | str:
        """An ArrayRef for subscript expression `c`, or why it cannot be analysed."""
        if not self.spelled(c):
            if not self.in_file(c):
                return ("written in a macro's argument or in an #include'd file: this "
                        "file's text there is not the reference")
            if self.reads_counter(c):
                return ("its text reads __COUNTER__, which repeating it in a hint would "
                        "advance")
            return ("written inside a macro's expansion: the text there is the macro's "
                    "call, not this reference")
        levels = []  # (index cursor, element type) from the innermost subscript outwards
        cur = c
        while cur.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, idx = list(cur.get_children())
            levels.append((idx, cur.type))
            inner = strip(base)
            # A[i][j] of `double **A`: A[i] is a pointer read from memory, the base.
            if (inner.kind == K.ARRAY_SUBSCRIPT_EXPR
                    and inner.type.get_canonical().kind in _ARRAY_KINDS):
                cur = inner
                continue
            cur = inner
            break
        levels.reverse()
        walk = self.walk_var(cur, loops)
        if walk is not None:
            return self.walk_ref(c, walk, levels, loops, nest_start, conditional)
        base_text, base_loops = self.base(cur, nest_start), ()
        loaded = base_text is None
        if loaded:
            sync = self.sync_in(nest_start)
            if sync is not None:
                return (f"the base is read from memory and the nest may synchronise with "
                        f"other threads ({sync}): no load is moved ahead of it")
            found = self.loaded_base(cur, loops, nest_start)
            if isinstance(found, str):
                return found
            base_text, base_loops, base_rows, base_loads = found
        elem = c.type
        elem_size = elem.get_size()
        if elem_size <= 0:
            return "element size unknown"
        strides: list[Sym] = []
        for depth, (_, t) in enumerate(levels):
            size = t.get_size()
            if size > 0:
                strides.append(sym_const(size))
            else:
                strides.append(sym_atom(f"sizeof({base_text}{'[0]' * (depth + 1)})"))
        subs: list[Affine] = []
        indirect = None
        for idx, _ in levels:
            aff = self.affine(idx, loops, nest_start)
            if aff is None:
                inner = strip(idx)
                # a[b[i]++] (a bucket's fill pointer): the index is read before or after
                # its increment; one element apart, the same page to prefetch.
                if inner.kind == K.UNARY_OPERATOR and unary_operator(inner) in (
                        "post++", "post--", "pre++", "pre--"):
                    inner = strip(next(inner.get_children()))
                if (inner.kind == K.ARRAY_SUBSCRIPT_EXPR and len(levels) == 1
                        and _INT_KINDS.__contains__(inner.type.get_canonical().kind)):
                    ix = self.reference(inner, loops, nest_start, conditional)
                    # a[b[i]] or a[c[b[i]]]: at most two levels of indirection
                    if isinstance(ix, ArrayRef) and (ix.indirect is None
                                                     or ix.indirect.indirect is None):
                        if loaded or ix.base_loaded or (ix.indirect is not None
                                                        and ix.indirect.base_loaded):
                            return "indirect reference through a base read from memory"
                        if inner.type.is_volatile_qualified():
                            return "indirect through a volatile index array"
                        sync = self.sync_in(nest_start)
                        if sync is not None:
                            return ("indirect, and the nest may synchronise with other "
                                    f"threads ({sync}): the index is not loaded ahead")
                        indirect = ix
                        continue
                return "index is not affine in the loop variables"
            subs.append(aff)
        parent_write = False
        ref = ArrayRef(text=self.text(c), line=c.location.line, base=base_text,
                       subscripts=subs if indirect is None else [], strides=strides,
                       elem_size=elem_size, is_write=parent_write, conditional=conditional,
                       indirect=indirect, object_bytes=None if loaded else self.object_bytes(cur))
        if loaded:
            end = self.nest_end.get(nest_start, len(self.data))
            ref.base_loaded, ref.base_loops, ref.base_rows = True, base_loops, base_rows
            ref.base_chain = base_loads > 1
            ref.base_writes = tuple(w for w in self.effects.pointer_stores if nest_start <= w < end)
        return ref

    def walk_var(self, c: ci.Cursor, loops: dict[tuple, str]) -> str | None:
        """The name of the pointer-walk loop variable `c` refers to, if it is one."""
        c = strip(c)
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
            key = decl_key(c.referenced)
            if key in self.walks and key in loops:
                return loops[key]
        return None

    def walk_ref(self, c: ci.Cursor, walk: str, levels: list, loops: dict[tuple, str],
                 nest_start: int, conditional: bool) -> ArrayRef | str:
        """`p[k]...` of a pointer-walk variable p: its address is (uintptr_t)p plus the
        subscripts, so the base is 0 and p a first subscript of one byte per unit."""
        subs, strides = [Affine({walk: sym_const(1)}, {})], [sym_const(1)]
        for idx, t in levels:
            aff = self.affine(idx, loops, nest_start)
            if aff is None:
                return "index is not affine in the loop variables"
            if t.get_size() <= 0:
                return "a pointer walk over rows of variable size"
            subs.append(aff)
            strides.append(sym_const(t.get_size()))
        if c.type.get_size() <= 0:
            return "element size unknown"
        return ArrayRef(text=self.text(c), line=c.location.line, base="0", subscripts=subs,
                        strides=strides, elem_size=c.type.get_size(), is_write=False,
                        conditional=conditional)

    def dereference(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int,
                    conditional: bool) -> ArrayRef | None:
        """`*p` or `*(p ± k)` of a pointer-walk variable p (k affine), as p[±k]; None for
        any other dereference (left to the body walk)."""
        if not self.spelled(c):
            return None
        kids = list(c.get_children())
        if len(kids) != 1:
            return None
        inner = strip(kids[0])
        walk, offset = self.walk_var(inner, loops), Affine()
        if walk is None and inner.kind == K.BINARY_OPERATOR and binary_operator(inner) in (
                "+", "-"):
            a, b = list(inner.get_children())
            walk = self.walk_var(a, loops)
            if walk is None and binary_operator(inner) == "+":
                a, b = b, a
                walk = self.walk_var(a, loops)
            aff = self.affine(b, loops, nest_start) if walk is not None else None
            if aff is None:
                return None
            offset = aff if binary_operator(inner) == "+" else aff.scaled(sym_const(-1))
        if walk is None:
            return None
        ref = self.walk_ref(c, walk, [], loops, nest_start, conditional)
        if isinstance(ref, str):
            return None
        ref.subscripts.append(offset)
        ref.strides.append(sym_const(ref.elem_size))
        return ref

    def walk_member(self, c: ci.Cursor, loops: dict[tuple, str],
                    conditional: bool) -> ArrayRef | None:
        """`s->x` of a pointer-walk variable s over structs, as the bytes of x at its
        offset; None for any other member access (left to the body walk)."""
        if not self.spelled(c):
            return None
        kids = list(c.get_children())
        if len(kids) != 1 or c.referenced is None or c.referenced.kind != K.FIELD_DECL:
            return None
        walk = self.walk_var(kids[0], loops)
        if walk is None or c.referenced.is_bitfield() or c.type.get_size() <= 0:
            return None
        owner = strip(kids[0]).referenced
        if owner is None or self.member_op(strip(kids[0]), c) != "->":
            return None
        bits = c.referenced.get_field_offsetof()
        if bits < 0 or bits % 8:
            return None
        ref = self.walk_ref(c, walk, [], loops, 0, conditional)
        if isinstance(ref, str):
            return None
        ref.subscripts.append(Affine({}, sym_const(bits // 8)))
        ref.strides.append(sym_const(1))
        return ref

    def loaded_base(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int
                    ) -> tuple[str, tuple[str, ...], tuple[str, Affine, int] | None, int] | str:
        """A base read from memory: the row pointer `A[i]` of `double **A` (A a base
        needing no load, a pointer member `g->rows`, or itself a row pointer, `T[i]` of
        `double ***T`; i affine in loop variables and invariant variables only, so its text
        can be evaluated again where the hints go) or the pointer member `p->q` of an
        invariant `p` (or a chain of them, member_chain).  Returns its text, the loop
        variables it depends on, for a row pointer whose row array needs at most one load
        (A, i, pointer bytes), and the number of loads; or why it cannot be used."""
        if c.type.is_volatile_qualified() or c.type.get_canonical().kind != ci.TypeKind.POINTER:
            return "the base is not a variable, array member or parameter"
        if c.kind == K.MEMBER_REF_EXPR:
            text = self.member_chain(c, nest_start)
            if text is None:
                return "the base pointer is read from memory through a pointer that may change"
            return text, (), None, text.count("->")
        if c.kind != K.ARRAY_SUBSCRIPT_EXPR:
            return "the base is not a variable, array member or parameter"
        rows, idx = list(c.get_children())
        rows = strip(rows)
        rows_text, rows_loops, rows_loads = self.base(rows, nest_start), (), 0
        if rows_text is None and rows.kind in (K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR):
            # g->rows[i][j]: the row array is a pointer member of an invariant g;
            # T[i][j][k] of double ***T: the row array T[i] is itself a row pointer
            found = self.loaded_base(rows, loops, nest_start)
            if not isinstance(found, str) and found[3] < 3:
                rows_text, rows_loops, _, rows_loads = found
        if rows_text is None:
            return "the base pointer is loaded from memory more than three times"
        aff = self.affine(idx, loops, nest_start)
        if aff is None:
            return "the row pointer's index is not affine in the loop variables"
        for d in idx.walk_preorder():
            if d.kind == K.DECL_REF_EXPR and d.referenced is not None and d.referenced.kind in (
                    K.VAR_DECL, K.PARM_DECL):
                if (decl_key(d.referenced) not in loops
                        and not self.invariant_var(d.referenced, nest_start)):
                    return "the row pointer's index uses a variable defined inside the nest"
        depends = tuple(v for v in loops.values() if v in aff.coeffs or v in rows_loops)
        # Rows ahead read the row array at other indices: only one whose text does not
        # change with the loops (T[i] of T[i][j] does).
        ahead = (rows_text, aff, c.type.get_size()) if not rows_loops else None
        return self.text(c), depends, ahead, rows_loads + 1

    def member_chain(self, c: ci.Cursor, nest_start: int, links: int = 0) -> str | None:
        """The text of a pointer member read through invariant links: `p->q` of an
        invariant pointer p, or a chain of up to four loads (`S->g->v`, `s.g->v` of an
        invariant struct s); None otherwise.  Each link must be written `->` or `.` in
        the source right after its owner, so the text can be evaluated again."""
        kids = list(c.get_children())
        owner = strip(kids[0]) if len(kids) == 1 else None
        if owner is None or links > 3:
            return None
        op = self.member_op(owner, c)
        if op is None or owner.type.is_volatile_qualified():
            return None
        if owner.kind == K.DECL_REF_EXPR and owner.referenced is not None:
            if not self.invariant_var(owner.referenced, nest_start):
                return None
            if op == "." and links == 0:
                return None   # s.p of a struct variable is not read through a pointer
            return f"{owner.referenced.spelling}{op}{c.spelling}"
        if owner.kind != K.MEMBER_REF_EXPR:
            return None
        inner = self.member_chain(owner, nest_start, links + (op == "->"))
        return None if inner is None else f"{inner}{op}{c.spelling}"

    def member_op(self, owner: ci.Cursor, member: ci.Cursor) -> str | None:
        """How the source writes member access `member` of `owner`: "->", "." or None
        (text elsewhere, e.g. from a macro)."""
        sep = self.data[owner.extent.end.offset:member.extent.end.offset].lstrip()
        return "->" if sep.startswith(b"->") else "." if sep.startswith(b".") else None

    def object_bytes(self, c: ci.Cursor) -> int | None:
        """Size of the object an array base names, when the source fixes it: an array
        of constant size, or a local pointer never written after its initializer
        `malloc(N)` / `calloc(N, M)` with constant arguments."""
        if c.type.get_canonical().kind == ci.TypeKind.CONSTANTARRAY and c.kind in (
                K.DECL_REF_EXPR, K.MEMBER_REF_EXPR):
            size = c.type.get_size()   # an array variable or member: its type's size
            if size > 0 and (c.kind == K.MEMBER_REF_EXPR or c.referenced is None
                             or c.referenced.kind == K.VAR_DECL):
                return size
        if c.kind != K.DECL_REF_EXPR or c.referenced is None:
            return None
        d = c.referenced
        kind = d.type.get_canonical().kind
        if kind == ci.TypeKind.CONSTANTARRAY and d.kind == K.VAR_DECL:
            size = d.type.get_size()
            return size if size > 0 else None
        if kind != ci.TypeKind.POINTER or d.kind != K.VAR_DECL:
            return None
        key = decl_key(d)
        if key in self.effects.writes or key in self.effects.address_taken:
            return None
        init = [k for k in d.get_children() if k.kind.is_expression()]
        if len(init) != 1:
            return None
        call = strip(init[0])
        while call.kind == K.CSTYLE_CAST_EXPR:
            kids = [k for k in call.get_children() if k.kind.is_expression()]
            if not kids:
                return None
            call = strip(kids[-1])
        if call.kind != K.CALL_EXPR or call.spelling not in ("malloc", "calloc"):
            return None
        args = [evaluate_int(a) for a in list(call.get_arguments())]
        if not args or any(a is None or a < 0 for a in args):
            return None
        if call.spelling == "malloc" and len(args) == 1:
            return args[0]
        if call.spelling == "calloc" and len(args) == 2:
            return args[0] * args[1]
        return None

    def base(self, c: ci.Cursor, nest_start: int) -> str | None:
        """C text of an array base whose address needs no load but of invariant variables."""
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
            d = c.referenced
            kind = d.type.get_canonical().kind
            if kind in _ARRAY_KINDS:
                if d.kind in (K.VAR_DECL, K.PARM_DECL) and not d.type.is_volatile_qualified():
                    return d.spelling
                return None
            if kind == ci.TypeKind.POINTER and self.invariant_var(d, nest_start):
                return d.spelling
            return None
        if c.kind == K.MEMBER_REF_EXPR:
            kids = list(c.get_children())
            if len(kids) != 1:
                return None
            owner = strip(kids[0])
            if owner.kind != K.DECL_REF_EXPR or owner.referenced is None:
                return None
            member_kind = c.type.get_canonical().kind
            arrow = self.member_op(owner, c) == "->"
            od = owner.referenced
            if arrow:
                if member_kind in _ARRAY_KINDS and self.invariant_var(od, nest_start):
                    return f"{od.spelling}->{c.spelling}"
                return None
            if od.type.is_volatile_qualified():
                return None
            if member_kind in _ARRAY_KINDS and od.kind in (K.VAR_DECL, K.PARM_DECL):
                return f"{od.spelling}.{c.spelling}"
            if member_kind == ci.TypeKind.POINTER and self.invariant_var(od, nest_start):
                return f"{od.spelling}.{c.spelling}"
        return None

    def affine(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int) -> Affine | None:
        """`c` as an affine function of the loop variables with invariant symbolic terms."""
        c = strip(c)
        if c.kind == K.CSTYLE_CAST_EXPR:
            if c.type.get_canonical().kind not in _INT_KINDS:
                return None
            kids = [k for k in c.get_children() if k.kind.is_expression()]
            return self.affine(kids[-1], loops, nest_start) if kids else None
        if c.type.get_canonical().kind not in _INT_KINDS:
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
            value = self.assigned_constant(c.referenced, c.extent.start.offset, nest_start)
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
            for b in self.fn.walk_preorder():
                if b.kind != K.COMPOUND_STMT or any(
                        k.kind in (K.LABEL_STMT, K.CASE_STMT, K.DEFAULT_STMT)
                        for k in b.walk_preorder()):
                    continue
                for st in b.get_children():
                    if st.kind != K.BINARY_OPERATOR or binary_operator(st) != "=":
                        continue
                    lhs, rhs = (strip(k) for k in st.get_children())
                    value = evaluate_int(rhs)
                    if lhs.kind == K.DECL_REF_EXPR and lhs.referenced is not None and \
                            value is not None:
                        self._constant_stores[(st.extent.start.offset,
                                               decl_key(lhs.referenced))] = (
                            value, st.extent.end.offset, b.extent.end.offset)
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
        init = [k for k in d.get_children() if k.kind.is_expression()]
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
            kids = list(c.get_children())
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
            kids = list(c.get_children())
            a = self.affine(kids[0], loops, nest_start) if kids else None
            if a is None:
                return None
            if op == "-":
                return a.scaled(sym_const(-1))
            if op == "+":
                return a
        return None


def _jump_target(c: ci.Cursor, in_switch: bool) -> str | None:
    """A label below `c` that a jump from outside `c` could reach: any `goto` label, and a
    `case`/`default` not enclosed by a switch below `c` (Duff's device)."""
    for k in c.get_children():
        if k.kind == K.LABEL_STMT:
            return (f"a label inside the nest ({k.spelling}, line {k.location.line}): a "
                    "goto into it would skip nest entry")
        if k.kind in (K.CASE_STMT, K.DEFAULT_STMT) and not in_switch:
            return (f"a case label inside the nest (line {k.location.line}) of a switch "
                    "outside it: the switch would jump past nest entry")
        found = _jump_target(k, in_switch or k.kind == K.SWITCH_STMT)
        if found is not None:
            return found
    return None


def cond_type(c: ci.Cursor) -> ci.Type:
    return c.type.get_canonical()


def _converted(value: int, t: ci.Type) -> int | None:
    """`value` stored into an integer variable of type `t` (None for other types)."""
    if t.kind == ci.TypeKind.BOOL:
        return int(value != 0)
    if t.kind not in _INT_KINDS or t.get_size() <= 0:
        return None
    bits = 8 * t.get_size()
    value %= 1 << bits
    if not _is_unsigned(t) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _is_unsigned(t: ci.Type) -> bool:
    return t.kind in (ci.TypeKind.BOOL, ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR,
                      ci.TypeKind.USHORT, ci.TypeKind.UINT, ci.TypeKind.ULONG,
                      ci.TypeKind.ULONGLONG)


def _trip(loop: Loop) -> int | None:
    """Constant trip count of a loop with constant bounds."""
    if loop.lower_sym is None or loop.upper_sym is None or loop.step is None:
        return None
    lo, hi = sym_value(loop.lower_sym), sym_value(loop.upper_sym)
    if lo is None or hi is None:
        return None
    s, op = loop.step, loop.cond_op
    if s > 0 and op in ("<", "<=", "!="):
        last = hi - 1 if op in ("<", "!=") else hi
        return max(0, (last - lo) // s + 1)
    if s < 0 and op in (">", ">=", "!="):
        last = hi + 1 if op in (">", "!=") else hi
        return max(0, (lo - last) // (-s) + 1)
    return None


__all__ = ["parse", "ParseFailure", "sym_add", "sym_mul"]
