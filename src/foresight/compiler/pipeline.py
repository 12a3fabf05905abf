"""Transform one C translation unit: parse, analyse, schedule hints, splice them in."""

from __future__ import annotations

from pathlib import Path

from foresight.compiler.options import CompileOptions, Transformed, decode_source
from foresight.errors import CompilerError


def transform(source: Path | str, clang_args: list[str], opts: CompileOptions) -> Transformed:
    """Return the transformed text of `source` (clang_args: its -I/-D/-U/-std flags).

    `source` is the path as the user wrote it (`./x.c`, not `x.c`): it is what cc puts in
    __FILE__, and the `#line` of the transformed text repeats it byte for byte.  Never
    raises for code the analysis cannot handle: such code is left unchanged and described
    in the report.  Raises CompilerError only when the file cannot be read.
    """
    from foresight.compiler.analysis.locality import analyse
    from foresight.compiler.frontend.parse import ParseFailure, parse
    from foresight.compiler.report import nest_report
    from foresight.compiler.rewrite.emit import Insertion, NestEmitter, splice
    from foresight.compiler.schedule.plan import schedule

    name = str(source)
    source = Path(source)
    try:
        original = source.read_bytes()
    except OSError as e:
        raise CompilerError(f"{source}: cannot read: {e.strerror}") from e
    unchanged = decode_source(original)
    try:
        nests, data, header_places = parse(source, clang_args)
    except ParseFailure as e:
        return Transformed(unchanged, False, [], [f"{e}; compiled unchanged"])
    report, insertions, warnings = [], [], []
    for n, nest in enumerate(nests):
        if nest.skipped:
            report.append(nest_report(nest, None, None, opts))
            continue
        try:
            facts = analyse(nest, opts)
            plan = schedule(facts, opts)
            nest_insertions = NestEmitter(plan, n, opts).insertions() if plan.hints else []
        except Exception as e:  # noqa: BLE001 - an analysis bug must never break a build
            nest.skipped = f"internal error in the analysis ({type(e).__name__}: {e})"
            report.append(nest_report(nest, None, None, opts))
            warnings.append(f"{source}:{nest.line}: foresight cc: {nest.skipped}; "
                            "the loop nest is compiled unchanged")
            continue
        report.append(nest_report(nest, facts, plan, opts))
        if opts.prefetch:
            insertions += nest_insertions
    if not insertions:
        return Transformed(unchanged, False, report, warnings)
    first = min(i.offset for i in insertions)
    at = max((o for o in header_places if o < first), default=None)
    header = "#include <foresight.h>\n"
    if at is not None:
        # After the file's own #includes (parse._header_places): cc reads the user's
        # feature test macros before the C library's first header, as without hints.
        line = data.count(b"\n", 0, at) + 1
        insertions.append(Insertion(at, 0, -1, f"{header}#line {line} {line_name(name)}\n"))
        header = ""
    body = decode_source(splice(data, insertions))
    # A UTF-8 byte order mark is white space to cc only as a file's first bytes.
    bom = "\ufeff" if body.startswith("\ufeff") else ""
    text = f'{bom}{header}#line 1 {line_name(name)}\n{body[len(bom):]}'
    return Transformed(text, True, report, warnings)


def line_name(name: str) -> str:
    """The string literal of a `#line` directive naming `name`, as cc spells __FILE__: `\\`
    and `"` escaped, other bytes (UTF-8 or not) as they are in the file system."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
