"""The front end's entry: a C file → its bytes, its loop nests (ir.LoopNest) and where the
runtime's header may go.

It reads the file in three layers, each a module: the translation unit and file-wide
facts (unit.py), per function the loops (loops.py, with text.py for what the source text
spells and values.py for what is invariant, constant or affine) and the references in
their bodies (refs.py).  What it cannot model (while loops, pointer walks over objects of
unknown size, bases needing more than three loads, non-affine indices, loops produced by
macros, pragmas that annotate no loop) is recorded as a problem on the loop or a reason
on the nest, and the passes leave it untouched.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import clang.cindex as ci

from foresight.compiler.analysis.effects import UnitEffects
from foresight.compiler.frontend.cursors import children
from foresight.compiler.frontend.loops import end_unit, function_nests
from foresight.compiler.frontend.sync import SyncPoints
from foresight.compiler.frontend.unit import (
    ParseFailure,
    Repeatable,
    Unrepeatable,
    counting_macros,
    header_places,
    load,
    macro_ranges,
    openmp,
    pragma_expansions,
)
from foresight.compiler.ir import LoopNest

K = ci.CursorKind

_LONE_CR = re.compile(rb"\r(?!\n)")


def parse(source: Path, clang_args: list[str], strict_aliasing: bool = True,
          own_definitions: bool = True
          ) -> tuple[list[LoopNest], bytes, list[int], list[tuple[str, int, str]]]:
    """All loop nests of `source`, its bytes (offsets in the IR index into them),
    unit.header_places for the runtime's header, and the functions with loops that
    headers of the program's own define (file, line, name: left alone, reported),
    under what the C compiler is told to assume (CompileOptions.strict_aliasing,
    own_definitions).  ParseFailure if libclang cannot parse it."""
    data = Path(source).read_bytes()
    tu = load(source, clang_args)
    end_unit()      # (answers kept per function of the last unit)
    main = str(tu.spelling)
    top = children(tu.cursor)
    macros = macro_ranges(top, main)
    pragma_macros = pragma_expansions(top, main)
    counting = counting_macros(tu, top, data, clang_args)
    unrepeatable = Unrepeatable(top, clang_args)
    line_reading = Unrepeatable(top, clang_args, roots=("__LINE__",))
    repeatable = Repeatable(top, clang_args)
    sync = SyncPoints({fn.get_usr(): fn for fn in top
                       if fn.kind == K.FUNCTION_DECL and fn.is_definition()})
    unit = UnitEffects(top, sync, data, strict_aliasing, own_definitions)
    nests: list[LoopNest] = []
    in_headers: list[tuple[str, int, str]] = []
    for fn in top:
        if not (fn.kind == K.FUNCTION_DECL and fn.is_definition() and fn.location.file):
            continue
        if str(fn.location.file) == main:
            nests += function_nests(fn, data, main, macros, unit, counting, unrepeatable,
                                    line_reading, repeatable, pragma_macros)
        elif not fn.location.is_in_system_header and _has_loop(fn):
            in_headers.append((str(fn.location.file), fn.location.line, fn.spelling))
    if any(openmp(a) for a in clang_args):
        regions = _omp_regions(source, clang_args, main)
        nests = [replace(n, omp_region=_region_of(n, regions)) for n in nests]
    # The unhinted copy of a nest repeats its lines with #line (rewrite/emit.py), counted
    # in newlines.
    why = None
    if _LONE_CR.search(data):
        why = "the file ends lines with a lone carriage return, which #line would miscount"
    elif _sets_lines(tu, main, data):
        why = "the file sets its own line numbers (#line), which a copy could not keep"
    if why is not None:
        nests = [replace(n, uncopyable=n.uncopyable or why) for n in nests]
    return nests, data, header_places(top, data, main), in_headers


_LOOPS = (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT)


def _has_loop(fn: ci.Cursor) -> bool:
    stack = list(children(fn))
    while stack:
        c = stack.pop()
        if c.kind in _LOOPS:
            return True
        stack.extend(children(c))
    return False


def _omp_regions(source: Path, clang_args: list[str], main: str) -> list[tuple[int, int, int]]:
    """(start, end, line) of every OpenMP directive's statement in the file, from a parse
    under -fopenmp (the nests' parse sees the code under directives as plain code, and
    reads the directives from the text: one from a macro, or with a comment between it
    and its loop, only this parse sees)."""
    tu = load(source, clang_args, hide_openmp=True)
    out, stack = [], [c for c in children(tu.cursor)
                      if c.location.file and str(c.location.file) == main]
    while stack:
        c = stack.pop()
        if c.kind.name.startswith("OMP_"):
            # A directive from a macro spans the macro's name only: its statement, a
            # child, spans the code.
            end = max([c.extent.end.offset] + [k.extent.end.offset for k in children(c)])
            out.append((c.extent.start.offset, end, c.extent.start.line))
            continue   # the outermost directive is the region
        stack.extend(children(c))
    return out


def _region_of(nest: LoopNest, regions: list[tuple[int, int, int]]) -> int:
    """The line of the OpenMP directive whose statement holds the nest, 0 when none."""
    start = nest.root.start if nest.root is not None else None
    if start is None:
        return 0
    return next((line for b, e, line in regions if b <= start < e), 0)


def _sets_lines(tu: ci.TranslationUnit, main: str, data: bytes) -> bool:
    """Whether the file has a `#line N` or `# N` directive (its tokens: not in comments)."""
    if b"line" not in data and not re.search(rb"#\s*[0-9]|%:\s*[0-9]", data):
        return False
    here = tu.get_file(main)
    span = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, here, 0),
                                         ci.SourceLocation.from_offset(tu, here, len(data)))
    tokens = list(tu.get_tokens(extent=span))
    return any(a.spelling in ("#", "%:")
               and (b.spelling == "line" or b.kind == ci.TokenKind.LITERAL)
               for a, b in zip(tokens, tokens[1:], strict=False))


__all__ = ["parse", "ParseFailure"]
