"""The passes of `foresight cc`, in the order they run: name -> function (passes/api.py).

To add one, write `passes/NAME.py` with `def run(unit, opts) -> PassResult` and add a
line here.
"""

from __future__ import annotations

from foresight.compiler.passes import color, prefetch, prefetch_thread
from foresight.compiler.passes.api import Pass

PASSES: dict[str, Pass] = {
    "prefetch": prefetch.run,   # prefetch and release hints (paper 1)
    "prefetch-thread": prefetch_thread.run,   # a run-ahead prefetch thread (AASFP, paper 2)
    "color": color.run,         # page-coloring summaries of parallel loops (CDPC, paper 4)
}
