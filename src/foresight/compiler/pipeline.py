"""Transform one C translation unit: parse it once, run every registered pass
(compiler/passes), splice all their insertions once."""

from __future__ import annotations

from pathlib import Path

from foresight.compiler.options import CompileOptions, Transformed, decode_source
from foresight.errors import CompilerError


def transform(source: Path | str, clang_args: list[str], opts: CompileOptions,
              passes: dict | None = None) -> Transformed:
    """Return the transformed text of `source` (clang_args: its -I/-D/-U/-std flags).

    `source` is the path as the user wrote it (`./x.c`, not `x.c`): it is what cc puts in
    __FILE__, and the `#line` of the transformed text repeats it byte for byte.  Never
    raises for code the analysis cannot handle: such code is left unchanged and described
    in the report.  Raises CompilerError only when the file cannot be read.  `passes`
    replaces the registry (compiler/passes) for tests.
    """
    from foresight.compiler.frontend.parse import ParseFailure, parse
    from foresight.compiler.passes import PASSES
    from foresight.compiler.passes.api import Unit
    from foresight.compiler.rewrite.splice import InsideReplaced, NoHeaderPlace, translation_unit

    name = str(source)
    source = Path(source)
    try:
        original = source.read_bytes()
    except OSError as e:
        raise CompilerError(f"{source}: cannot read: {e.strerror}") from e
    unchanged = decode_source(original)
    try:
        nests, data, header_places, in_headers = parse(
            source, clang_args, opts.strict_aliasing, opts.own_definitions)
    except ParseFailure as e:
        return Transformed(unchanged, False, [], [f"{e}; compiled unchanged"])
    unit = Unit(name, data, tuple(nests), tuple(clang_args))
    report, insertions, warnings = [], [], []
    for file, line, fn in in_headers:   # only the file being compiled is rewritten
        report.append({"pass": "frontend", "file": file, "line": line, "source": name,
                       "message": f"{fn}() has loops but is defined in a header, which "
                       "foresight cc does not rewrite: left alone"})
    replacing: dict[str, list] = {}   # passes that replace bytes: their insertions
    for pass_name, run in (PASSES if passes is None else passes).items():
        result = run(unit, opts)
        report += [{"pass": pass_name, **entry} for entry in result.report]
        insertions += result.insertions
        warnings += result.warnings
        if any(i.replaces for i in result.insertions):
            replacing[pass_name] = result.insertions
    while True:
        if not insertions:
            return Transformed(unchanged, False, report, warnings)
        try:
            text = translation_unit(name, data, insertions, header_places)
            required = [i for i in insertions if not i.optional]
            plain = translation_unit(name, data, required, header_places) \
                if required and len(required) < len(insertions) else None
            break
        except InsideReplaced:
            # Another pass's code inside a macro invocation a pass expands: that pass's
            # changes are left out.
            if not replacing:   # (only a replacing insertion leaves bytes out)
                raise
            for pass_name, theirs in replacing.items():
                drop = {id(i) for i in theirs}
                insertions = [i for i in insertions if id(i) not in drop]
                why = ("its changes were left out: another pass's code falls inside a macro "
                       "invocation it expands")
                report.append({"pass": pass_name, "file": name, "line": 0, "message": why})
                warnings.append(f"{name}: foresight: {pass_name}: {why}")
            replacing = {}
        except NoHeaderPlace:
            # (each #include line before the first loop ends in a comment left open or a
            # continued line, which the header's own line would join)
            for entry in report:
                entry.update(compiled_unchanged=True, unchanged_reason="the file defines a "
                             "feature test macro (_GNU_SOURCE...) and no line after it and "
                             "before its first loop can take the runtime's header")
            return Transformed(unchanged, False, report, warnings)
    return Transformed(text, True, report, warnings, plain)
