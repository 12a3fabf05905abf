"""The C that one loop nest's hints add, while the emitters write it: the statements run
at nest entry, the statements run on every entry of a loop inside the nest, the nest's
name table, and the tests that tell which version of the nest runs."""

from __future__ import annotations

from collections.abc import Callable

from foresight.compiler.ir import Loop
from foresight.compiler.options import CompileOptions
from foresight.compiler.rewrite import bounds
from foresight.compiler.rewrite import cexpr as C
from foresight.compiler.rewrite.names import Names
from foresight.compiler.schedule.plan import Hint, NestPlan


def _placeholder(i: int) -> str:
    """Stands for a name not yet allocated in the text given to NestCode.shared (never
    in C: C text has no NUL)."""
    return f"\0{i}\0"


class NestCode:
    def __init__(self, plan: NestPlan, nest: int, opts: CompileOptions):
        self.plan, self.opts = plan, opts
        self.names = Names(nest)
        self.entry: list[str] = []                 # statements at nest entry, in order
        self.resets: dict[int, list[str]] = {}     # by id of a loop: run on its entry
        self.reset_at: dict[int, Loop] = {}        # ... that loop
        self._shared: dict[str, tuple[str, ...]] = {}
        self._versions: dict[int, str] = {}        # by id of a Version's moves

    def shared(self, what: str, render: Callable[..., str], count: int = 1) -> tuple[str, ...]:
        """The names of a value computed at nest entry by the statements `render(*names)`
        (`count` names): declared once for all the hints whose statements are the
        same text up to those names."""
        key = render(*map(_placeholder, range(count)))
        if key not in self._shared:
            self._shared[key] = self.names.fresh(what, count)
            self.entry.append(render(*self._shared[key]))
        return self._shared[key]

    def reset(self, lp: Loop, statement: str) -> None:
        """Run `statement` on every entry of `lp` (at nest entry for the nest's root)."""
        if lp is self.plan.facts.nest.root:
            return
        self.resets.setdefault(id(lp), []).append(statement)
        self.reset_at[id(lp)] = lp

    def choose_versions(self) -> None:
        """At nest entry, per set of moves (plan.Version), which of its candidate
        pipelining loops the nest takes; hints with the same moves share the test."""
        for h in self.plan.hints:
            if h.version is not None and id(h.version.moves) not in self._versions:
                test = C.ternary(self.names.active,
                                 bounds.version(h.version.moves, self.opts.block_size), "0")
                self._versions[id(h.version.moves)] = self.shared(
                    "pv", lambda pv, test=test: C.decl("const int", (pv, test)))[0]

    def chosen(self, h: Hint) -> str:
        """Whether the nest's entry chose h's pipelining loop (h has a version)."""
        assert h.version is not None
        return C.cmp(self._versions[id(h.version.moves)], "==", str(h.version.taken))

    def index(self, h: Hint) -> int:
        """h's number in the nest (its names and site)."""
        return self.plan.hints.index(h)

    def distance(self, p: int, kind: str) -> str:
        """The distance in iterations the nest's entry computed for pipelining loop
        number `p` (foresight_nest_enter, schedule/distance.py's rule): `ds` for its
        streams and rows ahead, `di` for its indirect references."""
        return C.index(self.names.distances, 2 * p + (kind == "indirect"))
