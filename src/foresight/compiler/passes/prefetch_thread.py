"""The prefetch-thread pass (`foresight cc --prefetch-thread`; AASFP, paper 2, issue 24):
slice the file's I/O code (analysis/ioslice.py) into a thread that runs ahead of the
program and tells the runtime which file blocks it will read (rewrite/prefetch_thread.py).
A file it cannot slice is compiled without a thread, and says why."""

from __future__ import annotations

from foresight.compiler.options import CompileOptions
from foresight.compiler.passes.api import PassResult, Unit


class _NoThread(Exception):
    def __init__(self, line: int, why: str, said: bool = True):
        super().__init__(why)
        self.line, self.why, self.said = line, why, said


def _thread(unit: Unit, text: bytes | None):
    """(program, slice, insertions) of the file, or of `text` as the file; _NoThread."""
    from foresight.compiler.analysis.ioslice import anchor_roots, slice_program
    from foresight.compiler.frontend.program import parse_program
    from foresight.compiler.rewrite.prefetch_thread import Refused, thread_insertions

    data = unit.data if text is None else text
    try:
        program = parse_program(unit.path, list(unit.clang_args), text)
        roots: tuple[str, ...] = ("main",)
        if not any(f.name == "main" for f in program.functions):
            # A file of a program whose main is elsewhere: the thread's runs start at the
            # entries of its functions other files may call (anchors).
            unspelled: list = []
            roots = anchor_roots(program, data, unspelled)
            _unspelled[:] = unspelled
            if not roots:
                raise _NoThread(0, "no prefetch thread here: main is not in this file, nor "
                                "a function other files call", False)
        sl = slice_program(program, data, roots)
        dropped: dict[str, tuple[int, str]] = {}
        while sl.refusals and sl.unanchored and set(sl.unanchored) < set(roots):
            # A function where runs cannot start (it passes the program's memory): the
            # others anchor theirs without it.
            dropped.update(sl.unanchored)
            roots = tuple(r for r in roots if r not in sl.unanchored)
            sl = slice_program(program, data, roots)
        sl.unanchored = {**dropped, **sl.unanchored}
        if sl.refusals:
            line, why = sl.refusals[0]
            more = len(sl.refusals) - 1
            raise _NoThread(line, why + (f" (and {more} more)" if more else ""))
        if not sl.io_sites and roots != ("main",):
            raise _NoThread(0, "no prefetch thread here: no function other files call "
                            "reaches a read of a file", False)
        if not sl.io_sites:
            # Reported, not said: the reads may be in another file of the program (each
            # file is sliced alone), whose functions anchor runs of their own.
            main = next(f for f in program.functions if f.name == "main")
            raise _NoThread(main.line, "no prefetch thread here: main reaches no read of a "
                            "file in this file (read, pread, fread, fgets, getline, fscanf); "
                            "reads in the program's other files get runs anchored at their "
                            "functions' entries", False)
        return program, sl, thread_insertions(sl, data, unit.path)
    except Refused as e:
        raise _NoThread(e.line, e.why) from e
    except _NoThread:
        raise
    except Exception as e:  # noqa: BLE001 - an analysis bug must never break a build
        raise _NoThread(0, f"internal error in the slicer ({type(e).__name__}: {e})") from e


def _expanded(unit: Unit):
    """_thread of the file with its I/O macros expanded (frontend/macro_io.py), its
    insertions in the file's offsets; None when there is nothing to expand or the thread
    is refused anyway."""
    from foresight.compiler.analysis.ioslice import CHANNEL, CHANNEL_STDIN, IO_CALLS, WRITES
    from foresight.compiler.frontend.macro_io import expand_io_macros

    names = frozenset(IO_CALLS) | frozenset(WRITES) | frozenset(CHANNEL) | frozenset(CHANNEL_STDIN)
    try:
        found = expand_io_macros(unit.path, list(unit.clang_args), unit.data, names)
    except Exception:  # noqa: BLE001 - as _thread: the file is then refused as before
        return None
    if found is None:
        return None
    text, expansions = found
    try:
        program, sl, insertions = _thread(unit, text)
    except _NoThread:
        return None
    return program, sl, _back(insertions, expansions), len(expansions)


def _back(insertions: list, expansions: list) -> list:
    """Insertions made in the expanded text, in the original file: those inside an
    expansion (its ends included) go into its text, which replaces the invocation."""
    from dataclasses import replace

    from foresight.compiler.frontend.macro_io import back_offset, spans_of
    from foresight.compiler.options import decode_source, encode_source
    from foresight.compiler.rewrite.splice import REPLACES, Insertion, splice

    spans = spans_of(expansions)
    inside: dict[int, list] = {}
    out = []
    for ins in insertions:
        k = next((k for k, (a, b, _) in enumerate(spans) if a <= ins.offset <= b), None)
        if k is not None:
            inside.setdefault(k, []).append(replace(ins, offset=ins.offset - spans[k][0]))
            continue
        out.append(replace(ins, offset=back_offset(spans, ins.offset)))
    for k, (_, _, e) in enumerate(spans):
        text = decode_source(splice(encode_source(e.text), inside.get(k, [])))
        out.append(Insertion(e.start, REPLACES, 0, text, replaces=e.end - e.start))
    return out


_last: list = []   # [(key, PassResult)]: the last file's result, which both passes ask
_unspelled: list = []  # (line, name): functions of the last file without main a macro names


def run(unit: Unit, opts: CompileOptions) -> PassResult:
    key = (unit.path, unit.data, unit.clang_args, opts)
    if not _last or _last[0][0] != key:
        _last[:] = [(key, _run(unit, opts))]
    return _last[0][1]


def claimed(unit: Unit, opts: CompileOptions) -> list[tuple[int, int]]:
    """The bytes of the file this pass changes (each insertion's offset, and what it
    replaces): code another pass copies must not hold them (passes/prefetch.py)."""
    if not opts.prefetch_thread:
        return []
    return [(i.offset, i.offset + i.replaces) for i in run(unit, opts).insertions]


def _run(unit: Unit, opts: CompileOptions) -> PassResult:
    out = PassResult()
    if not opts.prefetch_thread:
        return out
    from foresight.compiler.analysis.ioslice import IO_CALLS, TICKED

    expanded = 0
    _unspelled.clear()
    try:
        program, sl, insertions = _thread(unit, None)
    except _NoThread as e:
        again = _expanded(unit) if e.said and "macro" in e.why else None
        if again is None:
            out.report.append({"file": unit.path, "line": e.line,
                               "message": f"no prefetch thread: {e.why}" if e.said else e.why})
            if e.said:
                out.warnings.append(f"{unit.path}:{e.line}: foresight: no prefetch thread: "
                                    f"{e.why}")
            return out
        program, sl, insertions, expanded = again
    functions = {f.name: f for f in program.functions}
    what = "prefetch thread" if opts.prefetch else "prefetch thread (not inserted: --no-prefetch)"
    if sl.anchors:
        what += " anchored at " + ", ".join(f"`{a}` (line {functions[a].line})"
                                            for a in sl.anchors)
    first = functions["main"] if "main" in functions else functions[sl.anchors[0]]
    out.report.append({"file": unit.path, "line": first.line, "message":
                       f"{what}: {len(sl.kept)} function(s) sliced, "
                       f"{sum(len(k) for k in sl.kept.values())} statements kept"
                       + (f"; {expanded} invocation(s) of macros that make I/O calls "
                          "expanded in the compiled text" if expanded else "")})
    for name, ids in sl.kept.items():
        fn = functions[name]
        lines = sorted({fn.stmts[i].line for i in ids if fn.stmts[i].line})
        out.report.append({"file": unit.path, "line": fn.line, "message":
                           f"slice of {name}: line {_ranges(lines)}"})
    for line, name in _unspelled if "main" not in functions else ():
        out.report.append({"file": unit.path, "line": line, "message":
                           f"no runs start at `{name}`: a macro makes its name, and the "
                           "anchor cannot be written into its definition"})
    for f, (line, why) in sorted(sl.unanchored.items()):
        out.report.append({"file": unit.path, "line": line,
                           "message": f"no runs start at `{f}`: {why}"})
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
