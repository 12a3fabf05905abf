"""The `#pragma` lines of the source text around loops: the OpenMP annotation of a loop
(`#pragma omp parallel for schedule(static, 4) num_threads(t) collapse(2)`) read into
an ir.OmpLoop.

libclang is given -fopenmp as the macro _OPENMP only (frontend/unit.py): it ignores
`#pragma omp` and shows the loop under it as a plain for statement; the directive is
read here from the text.
"""

from __future__ import annotations

import re

from foresight.compiler.ir import OmpLoop

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*pragma\b")
_CLAUSE = re.compile(r"([A-Za-z_]\w*)\s*(\((?:[^()]|\([^()]*\))*\))?")


def _logical_line_before(data: bytes, start: int) -> tuple[int, bytes] | None:
    """The logical line (backslash continuations joined) that ends last before the line
    holding offset `start`, skipping blank lines and lines holding only a comment, when
    only white space precedes `start` on its own line; (its start offset, its text)."""
    line_start = data.rfind(b"\n", 0, start) + 1
    if data[line_start:start].strip():
        return None
    end = line_start - 1          # the newline ending the previous line
    while end > 0:
        begin = data.rfind(b"\n", 0, end) + 1
        line = data[begin:end].strip()
        if line and not _comment_only(line):
            break
        end = begin - 1
    if end <= 0:
        return None
    begin = data.rfind(b"\n", 0, end) + 1
    # Continued from the lines above: they end with a backslash.
    while begin > 1 and data[:begin - 1].rstrip(b"\r").endswith(b"\\"):
        begin = data.rfind(b"\n", 0, begin - 1) + 1
    text = re.sub(rb"\\\r?\n", b" ", data[begin:end])
    return begin, text


def _comment_only(line: bytes) -> bool:
    """A stripped line that holds a comment and nothing else (`// x`, `/* x */`)."""
    return line.startswith(b"//") or (line.startswith(b"/*") and line.endswith(b"*/")
                                      and b"*/" not in line[2:-2])


def pragma_before(data: bytes, start: int) -> tuple[int, str] | None:
    """The `#pragma` right before the statement at offset `start` (only blank lines
    between): (the pragma's start offset, its text after `pragma`)."""
    found = _logical_line_before(data, start)
    if found is None:
        return None
    begin, text = found
    m = _DIRECTIVE.match(text)
    if m is None:
        return None
    return begin, text[m.end():].decode("utf-8", "replace").strip()


def omp_loop(text: str, line: int) -> OmpLoop | None:
    """The OpenMP annotation a pragma's text (after `pragma`) gives a loop, or None if it
    is not an OpenMP directive."""
    words = text.split(None, 1)
    if not words or words[0] != "omp":
        return None
    rest = words[1] if len(words) > 1 else ""
    directive, clauses = [], []
    for m in _CLAUSE.finditer(rest):
        name, args = m.group(1), m.group(2)
        if args is None and not clauses:
            directive.append(name)      # `parallel for simd`: words before any clause
        else:
            clauses.append(name + (args or ""))
    schedule = chunk = threads = None
    collapse = 1
    for c in clauses:
        name, _, args = c.partition("(")
        args = args[:-1].strip() if args.endswith(")") else args.strip()
        if name == "schedule" and args:
            kind, _, chunk_text = args.partition(",")
            schedule = kind.split(":")[-1].strip()   # `monotonic: static` -> static
            chunk = chunk_text.strip() or None
        elif name == "num_threads" and args:
            threads = args
        elif name == "collapse" and args.isdigit():
            collapse = int(args)
    return OmpLoop(directive=" ".join(directive), line=line, schedule=schedule, chunk=chunk,
                   num_threads=threads, collapse=collapse, clauses=tuple(clauses))
