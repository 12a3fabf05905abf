"""The prefetch-thread pass (`foresight cc --prefetch-thread`; AASFP, paper 2, issue 24):
slice the file's I/O code (analysis/ioslice.py) into a thread that runs ahead of the
program and tells the runtime which file blocks it will read (rewrite/prefetch_thread.py).
A file it cannot slice is compiled without a thread, and says why."""

from __future__ import annotations

from foresight.compiler.options import CompileOptions
from foresight.compiler.passes.api import PassResult, Unit


def run(unit: Unit, opts: CompileOptions) -> PassResult:
    out = PassResult()
    if not opts.prefetch_thread:
        return out
    from foresight.compiler.analysis.ioslice import IO_CALLS, TICKED, slice_program
    from foresight.compiler.frontend.program import parse_program
    from foresight.compiler.rewrite.prefetch_thread import Refused, thread_insertions

    def no_thread(line: int, why: str) -> None:
        out.report.append({"file": unit.path, "line": line,
                           "message": f"no prefetch thread: {why}"})
        out.warnings.append(f"{unit.path}:{line}: foresight: no prefetch thread: {why}")

    try:
        program = parse_program(unit.path, list(unit.clang_args))
        if not any(f.name == "main" for f in program.functions):
            # A file of a program whose main is elsewhere: the thread starts there (and
            # follows only main's file).
            out.report.append({"file": unit.path, "line": 0, "message":
                               "no prefetch thread here: main is not in this file"})
            return out
        sl = slice_program(program, unit.data)
        if sl.refusals:
            line, why = sl.refusals[0]
            more = len(sl.refusals) - 1
            no_thread(line, why + (f" (and {more} more)" if more else ""))
            return out
        if not sl.io_sites:
            # Said, not only reported: the reads may be in another file of the program
            # (each file is sliced alone).
            main = next(f for f in program.functions if f.name == "main")
            no_thread(main.line, "main reaches no read of a file in this file (read, pread, "
                      "fread, fgets, getline, fscanf); reads in the program's other files "
                      "are not followed")
            return out
        insertions = thread_insertions(sl, unit.data, unit.path)
    except Refused as e:
        no_thread(e.line, e.why)
        return out
    except Exception as e:  # noqa: BLE001 - an analysis bug must never break a build
        no_thread(0, f"internal error in the slicer ({type(e).__name__}: {e})")
        return out
    main = next(f for f in program.functions if f.name == "main")
    what = "prefetch thread" if opts.prefetch else "prefetch thread (not inserted: --no-prefetch)"
    out.report.append({"file": unit.path, "line": main.line, "message":
                       f"{what}: {len(sl.kept)} function(s) sliced, "
                       f"{sum(len(k) for k in sl.kept.values())} statements kept"})
    functions = {f.name: f for f in program.functions}
    for name, ids in sl.kept.items():
        fn = functions[name]
        lines = sorted({fn.stmts[i].line for i in ids if fn.stmts[i].line})
        out.report.append({"file": unit.path, "line": fn.line, "message":
                           f"slice of {name}: line {_ranges(lines)}"})
    for n, (f, c) in enumerate(sl.io_sites, 1):
        kind = IO_CALLS[c.name][0]
        what = kind
        if kind in TICKED or kind == "fgetc":
            what = "lead read (the thread reads the data)" if sl.lead(c) else "predicted read"
        out.report.append({"file": unit.path, "line": c.line,
                           "message": f"site {n}: `{c.name}` in {f}: {what}"})
    for n, (f, c) in enumerate(sl.chan_sites, 1):
        out.report.append({"file": unit.path, "line": c.line, "message":
                           f"sync point {n}: `{c.name}` in {f}: the thread waits for the "
                           "program's result (channel)"})
    if opts.prefetch:
        out.insertions += insertions
    return out


def _ranges(lines: list[int]) -> str:
    """Sorted line numbers as `3-5, 9, 12-13`."""
    runs: list[list[int]] = []
    for ln in lines:
        if runs and ln == runs[-1][1] + 1:
            runs[-1][1] = ln
        else:
            runs.append([ln, ln])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
