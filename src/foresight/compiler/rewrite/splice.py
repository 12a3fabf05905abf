"""Text insertions into a C file, and the transformed translation unit they make.

Every insertion is one line with no newline, so the user's code keeps its line
numbers, except a nest's unhinted copy (rewrite/emit.py), which carries the #line
directives that give its lines and the lines after it their numbers.  The runtime's
header (by its absolute path) goes after the file's own `#include`s with a `#line`
after it, and a `#line 1` at the top names the file exactly as the user did, so
diagnostics, __FILE__, __LINE__ and debuggers point at the user's file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from foresight.compiler.options import decode_source, encode_source, line_at


def runtime_header() -> str:
    """The runtime's header as an #include names it: by its absolute path, so that a
    header of the program's own called foresight.h in one of its -I directories (found
    first for <foresight.h>) is not taken for it; <foresight.h> where the path cannot be
    written between quotes."""
    from foresight.paths import include_dir

    path = str(include_dir() / "foresight.h")
    return f'"{path}"' if not any(c in path for c in '"\\\n') else "<foresight.h>"


@dataclass(order=True)
class Insertion:
    offset: int          # byte offset into the original file
    closing_first: int   # 0: a closing brace, 1: an opening text (closes come first)
    level: int           # outer openings first, inner closings first
    text: str
    # An optimisation the C compiler may refuse (a forced inline): the driver compiles
    # the text without it when cc rejects the text with it (Transformed.plain).
    optional: bool = field(default=False, compare=False)
    # Bytes of the file the text replaces (a macro invocation the prefetch thread's pass
    # expands: frontend/macro_io.py); such an insertion sorts after the others at its
    # offset (closing_first REPLACES).
    replaces: int = field(default=0, compare=False)


REPLACES = 2   # closing_first of an insertion that replaces bytes


class InsideReplaced(Exception):
    """An insertion falls inside bytes another insertion replaces."""


def splice(data: bytes, insertions: list[Insertion]) -> bytes:
    """`data` with every insertion's text at its offset (ties in Insertion order), and
    the bytes a replacing insertion replaces left out (InsideReplaced when another
    insertion falls inside them)."""
    out, pos = [], 0
    for ins in sorted(insertions):
        if ins.offset < pos:
            raise InsideReplaced(ins.offset)
        out.append(data[pos:ins.offset])
        out.append(encode_source(ins.text))
        pos = ins.offset + ins.replaces
    out.append(data[pos:])
    return b"".join(out)


class NoHeaderPlace(Exception):
    """The file defines a feature test macro, and no line before its first insertion can
    take the runtime's header after it."""


def translation_unit(name: str, data: bytes, insertions: list[Insertion],
                     header_places: list[int] | None) -> str:
    """The text to compile: `data` (the file `name` as the user wrote it) with the
    insertions and the runtime's header, which goes on the first line or, where the file
    defines a feature test macro, at the last of `header_places` before the first
    insertion, so that cc reads the user's feature test macros before the C library's
    first header, as without hints (NoHeaderPlace when there is none)."""
    insertions = list(insertions)
    # Before the first insertion that needs the header: an optional one (a forced
    # inline's attribute) needs none, and may come before the file's feature test macros.
    first = min((i.offset for i in insertions if not i.optional),
                default=min(i.offset for i in insertions))
    at = None
    if header_places is not None:
        at = max((o for o in header_places if o < first), default=None)
        if at is None:
            raise NoHeaderPlace
    header = f"#include {runtime_header()}\n"
    if at is not None:
        line = line_at(data, at)
        insertions.append(Insertion(at, 0, -1, f"{header}#line {line} {line_name(name)}\n"))
        header = ""
    body = decode_source(splice(data, insertions))
    # A UTF-8 byte order mark is white space to cc only as a file's first bytes.
    bom = "\ufeff" if body.startswith("\ufeff") else ""
    return f'{bom}{header}#line 1 {line_name(name)}\n{body[len(bom):]}'


def line_name(name: str) -> str:
    """The string literal of a `#line` directive naming `name`, as cc spells __FILE__: `\\`
    and `"` escaped, other bytes (UTF-8 or not) as they are in the file system."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
