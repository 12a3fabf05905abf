"""The page-coloring pass (`foresight cc --color`; paper 4, compiler-directed page
coloring): before every statically scheduled OpenMP loop, the summary of how its
iterations partition the arrays among the threads (analysis/partition.py), passed to
the runtime (rewrite/emit_color.py).  Off unless asked for: the runtime does nothing
with the summaries unless FORESIGHT_COLOR says what to do with them."""

from __future__ import annotations

import re

from foresight.compiler.analysis.partition import parallel_loops
from foresight.compiler.frontend import pragmas
from foresight.compiler.options import CompileOptions
from foresight.compiler.passes.api import PassResult, Unit
from foresight.compiler.rewrite.emit_color import summary_insertions, unevaluable

_DEVICE = re.compile(r"\b(target|teams)\b")


def _device_region(unit: Unit, line: int) -> bool:
    """Whether the OpenMP directive on LINE is a target or teams construct (code that may
    run on a device, or that must hold nothing but its teams)."""
    lines = unit.data.split(b"\n")
    return 0 < line <= len(lines) and bool(_DEVICE.search(lines[line - 1].decode("utf-8",
                                                                                "replace")))


def run(unit: Unit, opts: CompileOptions) -> PassResult:
    out = PassResult()
    if not opts.color:
        return out
    device_code = re.search(rb"omp\s+declare\s+target", unit.data) is not None
    # Code before a directive gets its line back with a #line naming the file: in a file
    # that numbers its own lines it would name the wrong one.
    own_lines = re.search(rb"(?m)^[ \t]*#[ \t]*(line\b|[0-9])", unit.data) is not None
    for nest in unit.nests:
        loops = parallel_loops(nest)
        if nest.omp_region and nest.root is not None and nest.root.omp is None and \
                not any(lp.omp for lp in nest.loops()):
            out.report.append({"file": unit.path, "line": nest.line, "message":
                               f"no coloring summary: the OpenMP directive at line "
                               f"{nest.omp_region} is not a `#pragma omp` line right before "
                               "the loop (a macro, an #if, a comment between)"})
        for pl in loops:
            lp = pl.loop
            why = pl.why or unevaluable(pl)
            if why is None and device_code:
                why = "the file declares device code (omp declare target)"
            if why is None and own_lines:
                why = "the file sets its own line numbers (#line)"
            if why is None and _device_region(unit, nest.omp_region):
                why = f"inside a target or teams construct (line {nest.omp_region})"
            found = pragmas.pragma_before(unit.data, lp.start)
            if why is None and found is None:
                why = "its #pragma is not on the line before the loop"
            if why is None:
                before = pragmas.pragma_before(unit.data, found[0])
                words = before[1].split() if before is not None else []
                if before is not None and (words[:1] != ["omp"] or _DEVICE.search(before[1])):
                    # `#pragma GCC unroll` must stay right before its loop; `target` and
                    # `teams` must hold their construct alone
                    why = f"another #pragma ({before[1]}) is on the directive's statement"
            for text, reason in pl.unsummarised:
                out.report.append({"file": unit.path, "line": lp.line, "message":
                                   f"{text}: its array is not summarised: {reason}"
                                   if text else f"not summarised: {reason}"})
            if why is not None:
                out.report.append({"file": unit.path, "line": lp.line,
                                   "message": f"no coloring summary: {why}"})
                continue
            at, _ = found
            line = unit.data.count(b"\n", 0, at) + 1
            out.insertions += summary_insertions(pl, at, line, unit.path, lp.depth)
            arrays = sorted({r.base for r in pl.refs})
            out.report.append({"file": unit.path, "line": lp.line, "message":
                               f"coloring summary of {len(pl.refs)} reference"
                               f"{'s' if len(pl.refs) != 1 else ''} to "
                               f"{', '.join(arrays)} (schedule "
                               f"{'static, ' + pl.omp.chunk if pl.cyclic else 'static'})"})
    return out
