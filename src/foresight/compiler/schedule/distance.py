"""How far ahead each hint runs: the one owner of the rule that rewrite/ renders
(as the nest's table for foresight_nest_enter, foresight.h) and report.py prints.

The distance is chosen at run time from the look-ahead bytes (adaptive preset) or at
compile time by the paper's Eq. (1) (paper preset: paper_distance below), per
pipelining loop, in iterations: `ds` for its streams (the look-ahead bytes over their
bytes per iteration) and `di` for its indirect references (over a page per reference
and iteration); where a loop has both, each gets half the look-ahead bytes, so the bytes
in flight stay within it.  A stream runs `ds` ahead, except an index stream b[i] feeding
an indirect reference a[b[i]]: the look-ahead loads read b[i + di], which must be in
memory by then, so it runs ds + di ahead, or 2 ds when its indirect reference is
pipelined across another loop (the paper's).  Rows reached through row pointers take
their own distance in rows, from each row's bytes (rewrite/emit_rows.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from foresight.compiler.ir import Loop, sym_value
from foresight.compiler.options import CompileOptions

if TYPE_CHECKING:   # plan.py asks paper_distance of this module
    from foresight.compiler.schedule.plan import Hint, NestPlan

# A stream's lead (struct foresight_nest_stream's `lead` in foresight.h).
LEAD_DS, LEAD_DS_DI, LEAD_2DS = 0, 1, 2


@dataclass(frozen=True)
class Distance:
    kind: str      # "stream", "indirect" or "rows"
    lead: int      # a stream's LEAD_*
    halved: bool   # the loop has streams and indirect references: each kind gets half
    fixed: int     # paper preset: Eq. (1)'s iterations for the loop (ds = di); else 0

    def describe(self) -> int | str:
        """The report's words for it (or, under the paper preset, the iterations)."""
        if self.fixed:
            return self.fixed * (1 if self.lead == LEAD_DS else 2)
        if self.kind == "rows":
            return "FORESIGHT_LOOKAHEAD bytes / the bytes of a row, at nest entry"
        share = "half of FORESIGHT_LOOKAHEAD bytes" if self.halved else \
            "FORESIGHT_LOOKAHEAD bytes"
        if self.kind == "indirect":
            return f"{share} / a page per indirect reference and iteration, at nest entry"
        out = f"{share} / the streams' bytes per iteration, at nest entry"
        return out + {LEAD_DS: "", LEAD_DS_DI: ", plus the indirect distance",
                      LEAD_2DS: ", twice that"}[self.lead]


def fixed(plan: NestPlan, pipe: Loop, opts: CompileOptions) -> int:
    """The paper preset's distance for `pipe` (Eq. (1)), else 0: chosen at run time."""
    return plan.paper_distance[pipe.var] if opts.preset == "paper" else 0


def of(plan: NestPlan, h: Hint, opts: CompileOptions) -> Distance:
    mates = [m for m in plan.hints if m.pipe is h.pipe and m.rows_for is None]
    indirect = any(m.indirect_index is not None for m in mates)
    streams = any(m.indirect_index is None for m in mates)
    kind = "rows" if h.rows_for is not None else \
        "indirect" if h.indirect_index is not None else "stream"
    lead = LEAD_DS
    if kind == "stream" and h.feeds_indirect:
        lead = LEAD_DS_DI if indirect else LEAD_2DS
    return Distance(kind, lead, streams and indirect, fixed(plan, h.pipe, opts))


def iteration_cycles(lp: Loop) -> int:
    """Eq. (1)'s s for one iteration of `lp`: its operators, 2 for the loop test and
    increment, and its inner loops' iterations (a symbolic trip count counts as 100)."""
    return lp.ops + 2 + sum((ch.trip if ch.trip is not None else 100) * iteration_cycles(ch)
                            for ch in lp.children)


# The paper's prefetch overhead in cycles (Section 3.2.2.1), l_p of Eq. (1).
PREFETCH_CYCLES = 10_000


def paper_distance(pipe: Loop, hints: list[Hint], opts: CompileOptions) -> tuple[int, int]:
    """Eq. (1) per block: d = ceil(l_m / (n·s + l_p)) blocks of n iterations each, where n is
    the iterations one block prefetch covers.  Returns (blocks, iterations)."""
    n = 1
    for h in hints:
        if h.indirect_index is None:
            c = sym_value(h.ref.byte_offset().coeff(pipe.var))
            if c:
                n = max(n, opts.block_size // abs(c))
    l_p = PREFETCH_CYCLES
    blocks = max(1, math.ceil(opts.latency_cycles / (n * iteration_cycles(pipe) + l_p)))
    return blocks, blocks * n
