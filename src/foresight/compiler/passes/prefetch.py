"""The prefetch and release pass: per loop nest, the locality analysis, the schedule of
hints and their code (paper 1: compiler-inserted I/O prefetching and releasing)."""

from __future__ import annotations

import re
from dataclasses import replace

from foresight.compiler.analysis.locality import analyse
from foresight.compiler.options import CompileOptions
from foresight.compiler.passes import prefetch_thread
from foresight.compiler.passes.api import PassResult, Unit
from foresight.compiler.report import nest_report
from foresight.compiler.rewrite.emit import NestEmitter, inline_insertions
from foresight.compiler.schedule.plan import schedule

# Fast math asked by the source itself: `#pragma GCC optimize ("fast-math")`,
# `__attribute__((optimize("Ofast")))`, clang's `#pragma clang fp reassociate(on)`.
_SOURCE_FAST_MATH = re.compile(
    rb"\boptimize\b[^\n]*(?:fast-math|Ofast|associative-math|unsafe-math)"
    rb"|#\s*pragma\s+clang\s+fp\s+reassociate\s*\(\s*on")


def run(unit: Unit, opts: CompileOptions) -> PassResult:
    out = PassResult()
    reassociates = opts.reassociates or _SOURCE_FAST_MATH.search(unit.data) is not None
    forced: set[int] = set()   # offsets of forced inlines: a function nests share, once
    taken = prefetch_thread.claimed(unit, opts)   # what the thread's pass changes
    for n, nest in enumerate(unit.nests):
        omp = next((lp.omp for lp in nest.loops() if lp.omp is not None), None)
        if omp is not None and not nest.skipped:
            # A parallel loop's iterations run on several threads; the hints' state
            # (countdowns, look-ahead windows) is one thread's.
            nest = replace(nest, skipped=f"an OpenMP loop (line {omp.line}: #pragma omp "
                           f"{omp.directive}): parallel loops are not hinted")
        if reassociates and not nest.skipped and any(lp.float_math
                                                          for lp in nest.loops()):
            # The hinted copy runs the body in strips whose lengths the run decides; cc
            # may vectorise and sum each strip in another order than the unhinted copy,
            # so results would follow memory (a probe's -O3 -ffast-math sum differed in
            # its last digits with hints on).
            nest = replace(nest, skipped="computes in floating point, which -ffast-math "
                           "(-Ofast, -fassociative-math, or the file's own optimize "
                           "pragma or attribute) lets cc reorder: a hinted copy's results "
                           "could differ from the unhinted one's, not hinted")
        if nest.omp_region and not nest.skipped:
            nest = replace(nest, skipped=f"inside an OpenMP directive's statement (line "
                           f"{nest.omp_region}): run by a team of threads, not hinted")
        if (not nest.skipped and nest.root is not None
                and any(nest.root.start <= a < nest.root.end for a, _ in taken)):
            # Its copies (the unhinted version) would hold the I/O calls without the
            # ticks that advance the call IDs the thread counts.
            nest = replace(nest, skipped="holds I/O calls the prefetch thread mirrors "
                           "(--prefetch-thread)")
        if nest.skipped:
            out.report.append(nest_report(nest, None, None, opts))
            continue
        try:
            facts = analyse(nest, opts)
            plan = schedule(facts, opts)
            insertions = (NestEmitter(plan, n, opts, unit).insertions() +
                          inline_insertions(nest, plan, opts) if plan.hints else [])
        except Exception as e:  # noqa: BLE001 - an analysis bug must never break a build
            why = f"internal error in the analysis ({type(e).__name__}: {e})"
            out.report.append(nest_report(replace(nest, skipped=why), None, None, opts))
            out.warnings.append(f"{unit.path}:{nest.line}: foresight cc: {why}; "
                                "the loop nest is compiled unchanged")
            continue
        out.report.append(nest_report(nest, facts, plan, opts))
        if opts.prefetch:
            out.insertions += [i for i in insertions if not i.optional or i.offset not in forced]
            forced |= {i.offset for i in insertions if i.optional}
    return out
