"""The one table of the names the hints of a loop nest add to the C text.

Every generated name starts with `__fs_` (reserved to the implementation, so it never
meets a name of the program) and, when it lives at nest scope, carries the nest's
number.  A name is allocated once, here, and handed to both the code that declares it
and the code that uses it: no two places format the same name.  Names are unique in a
nest: where the usual spelling is taken already (the countdowns of two pipelining loops
with the same variable on one line, `for (i...) x[i]...; for (i...) y[i]...`), the
table gives the next free one with a suffix.
"""

from __future__ import annotations

from dataclasses import dataclass

from foresight.compiler.ir import Loop


@dataclass(frozen=True)
class HintNames:
    """The names of one hint's state at nest scope (indirect and rows-ahead hints use
    `started`; indirect ones `skip` and `random` too) and of its site."""

    site: str      # its FORESIGHT_SITE (per-site statistics and quiet state)
    started: str   # whether its prolog ran on this entry of the loop it covers
    skip: str      # an indirect hint's quiet calls left (foresight_site_quiet_take)
    random: str    # an indirect hint's random-access advice, ended on leaving the nest


@dataclass(frozen=True)
class Locals:
    """Block-scope names: each is declared and used within one block of one emitter, so
    one spelling serves every nest."""

    left: str = "__fs_left"   # iterations of the loop after the current one
    j: str = "__fs_j"         # the iteration a look-ahead load reads
    t: str = "__fs_t"         # a prolog's iterations ahead
    x: str = "__fs_x"         # the index an indirect hint read ahead
    y: str = "__fs_y"         # ... through a middle table, its first index
    n: str = "__fs_n"         # rows ahead
    cb: str = "__fs_cb"       # bytes of the current row
    rb: str = "__fs_rb"       # bytes of the row ahead
    rp: str = "__fs_rp"       # the row pointer ahead
    nv: str = "__fs_nv"       # the streams' run-time values at nest entry
    sites: str = "__fs_ss"    # the streams' sites, for foresight_streams_step
    at: str = "__fs_at"       # the streams' current and trailing addresses
    f: str = "__fs_f"         # a reference's footprint so far (release volume)
    stride: str = "__fs_st"   # ... the stride of the loop adding to it
    page: str = "__fs_pg"     # ... the footprint rounded up to pages
    e: str = "__fs_e"         # a region's extent along one loop


LOCALS = Locals()


class Names:
    """The names of nest `nest`, allocated on first request."""

    def __init__(self, nest: int):
        self.nest = nest
        self._taken: set[str] = set(vars(LOCALS).values())
        self._pipes: dict[int, str] = {}
        self._hints: dict[int, HintNames] = {}
        self._counts: dict[str, int] = {}
        self.active = self._new("on")       # whether this run of the nest is hinted
        self.lookahead = self._new("ahead")  # the look-ahead bytes (rows-ahead hints)
        self.streams = self._new("sp")      # the nest's array of struct foresight_stream
        self.distances = self._new("d")     # ds, di per pipelining loop (foresight_nest_enter)
        self.table = self._new("nest")      # its struct foresight_nest
        self.stream_table = self._new("ns")  # ... the streams' constant part
        self.pipe_table = self._new("np")   # ... and the loops'

    def _new(self, what: str, *keys: int | str) -> str:
        name = "_".join([f"__fs_{what}", str(self.nest), *map(str, keys)])
        base, k = name, 1
        while name in self._taken:   # e.g. two pipelining loops over i on one line
            name, k = f"{base}_{k}", k + 1
        self._taken.add(name)
        return name

    def countdown(self, pipe: Loop) -> str:
        """The countdown shared by the streams of pipelining loop `pipe`."""
        if id(pipe) not in self._pipes:
            self._pipes[id(pipe)] = self._new("pc", f"{pipe.var}{pipe.line}")
        return self._pipes[id(pipe)]

    def strip(self, pipe: Loop) -> tuple[str, str]:
        """A split loop's (rewrite/emit_stream.strip) iterations in the current strip and
        its counter, named after the loop."""
        key = f"{pipe.var}{pipe.line}"
        return self._new("sn", key), self._new("sk", key)

    def hint(self, k: int) -> HintNames:
        """The names of the nest's hint number `k` (its index in the plan)."""
        if k not in self._hints:
            self._hints[k] = HintNames(*(self._new(what, k)
                                         for what in ("site", "started", "skip", "rs")))
        return self._hints[k]

    def fresh(self, what: str, count: int = 1) -> tuple[str, ...]:
        """`count` new names for a value of kind `what` computed at nest entry: the
        first numbered by how many of its kind came before, the others it with a
        suffix _1, _2, ..."""
        first = self._new(what, self._counts.get(what, 0))
        self._counts[what] = self._counts.get(what, 0) + 1
        rest = [f"{first}_{i}" for i in range(1, count)]
        assert not self._taken.intersection(rest), rest
        self._taken.update(rest)
        return (first, *rest)
