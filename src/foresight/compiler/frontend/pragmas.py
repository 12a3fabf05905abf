"""The `#pragma` lines of the source text around loops: the OpenMP annotation of a loop
(`#pragma omp parallel for schedule(static, 4) num_threads(t) collapse(2)`) read into
an ir.OmpLoop.

libclang is given -fopenmp as the macro _OPENMP only (frontend/unit.py): it ignores
`#pragma omp` and shows the loop under it as a plain for statement; the directive is
read here from the text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from foresight.compiler.ir import OmpLoop

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*pragma\b")
_NAME = re.compile(r"\s*([A-Za-z_]\w*)\s*")
_COMMENT = re.compile(r"/\*.*?\*/|//.*$", re.S)


@lru_cache(maxsize=8)
def _comments(data: bytes) -> list[tuple[int, int]]:
    """The (start, end) of every comment of a C file, in order (strings and character
    constants skipped)."""
    out, i, n = [], 0, len(data)
    while i < n:
        c = data[i]
        if c in (0x22, 0x27):   # a string or character constant
            q, i = c, i + 1
            while i < n and data[i] != q and data[i] != 0x0A:
                i += 2 if data[i] == 0x5C else 1
            i += 1
        elif data.startswith(b"/*", i):
            e = data.find(b"*/", i + 2)
            e = n if e < 0 else e + 2
            out.append((i, e))
            i = e
        elif data.startswith(b"//", i):
            e = data.find(b"\n", i)
            e = n if e < 0 else e
            out.append((i, e))
            i = e
        else:
            i += 1
    return out


def in_comment(data: bytes, offset: int) -> bool:
    spans = _comments(data)
    k = bisect_right(spans, (offset, len(data) + 1)) - 1
    return k >= 0 and spans[k][0] <= offset < spans[k][1]


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
    if m is None or in_comment(data, begin + text.index(b"#")):
        return None   # not a directive, or one commented out
    words = text[m.end():].decode("utf-8", "replace")
    return begin, _COMMENT.sub(" ", words).strip()


def omp_loop(text: str, line: int) -> OmpLoop | None:
    """The OpenMP annotation a pragma's text (after `pragma`) gives a loop, or None if it
    is not an OpenMP directive."""
    words = text.split(None, 1)
    if not words or words[0] != "omp":
        return None
    rest = words[1] if len(words) > 1 else ""
    directive, clauses = [], []
    at = 0
    while at < len(rest):
        m = _NAME.match(rest, at)
        if m is None:
            at += 1 if rest[at] in ", \t" else len(rest)   # a clause list's comma, or junk
            continue
        name, at = m.group(1), m.end()
        args = None
        if rest.startswith("(", at):   # its argument, nested parentheses and all
            depth, end = 0, at
            while end < len(rest):
                depth += {"(": 1, ")": -1}.get(rest[end], 0)
                end += 1
                if depth == 0:
                    break
            args, at = rest[at:end], end
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
        elif name == "collapse":
            collapse = int(args) if args.isdigit() else 0   # 0: not a number here
    return OmpLoop(directive=" ".join(directive), line=line, schedule=schedule, chunk=chunk,
                   num_threads=threads, collapse=collapse, clauses=tuple(clauses))
