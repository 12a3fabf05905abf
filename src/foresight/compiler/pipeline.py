"""Transform one C translation unit: parse, analyse, schedule hints, splice them in."""

from __future__ import annotations

from pathlib import Path

from foresight.compiler.options import CompileOptions, Transformed
from foresight.errors import CompilerError


def transform(source: Path, clang_args: list[str], opts: CompileOptions) -> Transformed:
    """Return the transformed text of `source` (clang_args: its -I/-D/-U/-std flags).

    Never raises for code the analysis cannot handle: such code is left unchanged and
    described in the report.  Raises CompilerError only when the file cannot be read.
    """
    from foresight.compiler.analysis.locality import analyse
    from foresight.compiler.frontend.parse import ParseFailure, parse
    from foresight.compiler.report import nest_report
    from foresight.compiler.rewrite.emit import NestEmitter, splice
    from foresight.compiler.schedule.plan import schedule

    source = Path(source)
    try:
        original = source.read_bytes()
    except OSError as e:
        raise CompilerError(f"{source}: cannot read: {e.strerror}") from e
    unchanged = original.decode("latin-1")
    try:
        nests, data = parse(source, clang_args)
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
    body = splice(data, insertions).decode("latin-1")
    name = str(source).replace("\\", "\\\\").replace('"', '\\"')
    text = f'#include <foresight.h>\n#line 1 "{name}"\n{body}'
    return Transformed(text, True, report, warnings)
