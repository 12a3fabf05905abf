"""Every `foresight bench` suite, in the order `foresight bench --help` lists them.

A new suite is one module with a `Suite` subclass and its instance `SUITE`
(bench/suite.py), and one line here; cli.py builds its subcommand from it."""

from __future__ import annotations

from foresight.bench import (
                             aasfp,
                             coloring,
                             compile,
                             compiler,
                             demo,
                             incore,
                             micro,
                             nas,
                             overhead,
                             sharedcache,
                             simspeed,
)
from foresight.bench.suite import Suite

SUITES: tuple[Suite, ...] = (
    demo.SUITE,
    micro.SUITE,
    overhead.SUITE,
    compiler.SUITE,
    nas.SUITE,
    incore.SUITE,
    compile.SUITE,
    sharedcache.SUITE,
    simspeed.SUITE,
    aasfp.SUITE,
    coloring.SUITE,
)
