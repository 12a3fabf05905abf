"""What a pass of `foresight cc` receives and returns (compiler/pipeline.py runs them).

A pass reads the parsed translation unit and returns typed data: entries for
`--report` and `--report-json`, text insertions, and warnings for the user.  It never
edits text itself and never changes the IR other passes see: the pipeline splices
every pass's insertions once, after all have run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from foresight.compiler.ir import LoopNest
from foresight.compiler.options import CompileOptions
from foresight.compiler.rewrite.splice import Insertion


@dataclass(frozen=True)
class Unit:
    """One parsed C file."""
    path: str                   # as the user wrote it (what cc puts in __FILE__)
    data: bytes                 # its bytes: the IR's offsets index into them
    nests: tuple[LoopNest, ...]  # every outermost loop nest, analysable or not (skipped)
    clang_args: tuple[str, ...] = ()  # how it was parsed (-I/-D/-U/-std)


@dataclass
class PassResult:
    report: list[dict] = field(default_factory=list)   # --report entries (file, line...)
    insertions: list[Insertion] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # "file:line: foresight cc: ..."


Pass = Callable[[Unit, CompileOptions], PassResult]
