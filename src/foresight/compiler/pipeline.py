"""Transform one C translation unit: parse, analyse, schedule hints, splice them in."""

from __future__ import annotations

from pathlib import Path

from foresight.compiler.options import CompileOptions, Transformed


def transform(source: Path, clang_args: list[str], opts: CompileOptions) -> Transformed:
    """Return the transformed text of `source` (clang_args: its -I/-D/-U/-std flags).

    Never raises for code the analysis cannot handle: such code is left unchanged and
    described in the report.  Raises CompilerError only when the file cannot be read.
    """
    text = Path(source).read_text(encoding="utf-8", errors="surrogateescape")
    return Transformed(text=text, changed=False, report=[], warnings=[])
