"""The one interface every `foresight bench` suite implements, and the run they share.

A suite is one module holding a `Suite` subclass and its instance `SUITE`, listed in
bench/registry.py; `foresight bench NAME` is built from it (cli.py).  The suite says
what is its own — its options (`add_options`), its measurement (`measure`, returning
the results as JSON-able data), its tables and the notes under them, its plots, its
exit status — and `Suite.run` does the rest alike for all: the common options
(`--json`, `--markdown`, and `--repeat`, `--plots` where the suite has them), output
paths checked before a long run, a readahead setting a killed run left behind
restored, then the table on the console, the plots, the JSON and the Markdown.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from foresight.bench import tables as tbl
from foresight.bench.tables import Table
from foresight.errors import UsageError
from foresight.harness.process import terminations_interrupt
from foresight.reports import check_writable, write_json, write_text


class Suite(ABC):
    """One benchmark suite: what is its own here, what all share in `run`."""

    name: ClassVar[str]            # foresight bench NAME
    help: ClassVar[str]            # its line in `foresight bench --help`
    description: ClassVar[str]     # `foresight bench NAME --help`: the module's docstring
    repeat: ClassVar[bool] = True  # --repeat K: runs per variant, medians reported
    repeat_default: ClassVar[int] = 1
    plots: ClassVar[bool] = True   # --plots DIR

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "description" not in cls.__dict__:
            cls.description = sys.modules[cls.__module__].__doc__ or cls.help

    def add_options(self, parser: argparse.ArgumentParser) -> None:  # noqa: B027 (optional)
        """The suite's own options (none by default)."""

    @abstractmethod
    def measure(self, ns: argparse.Namespace) -> dict:
        """Check the options (UsageError), run the suite and return its results: what
        --json writes, and what the tables, notes and plots are made from."""

    @abstractmethod
    def tables(self, res: dict) -> list[Table]:
        """The results as tables (the console's and the Markdown's)."""

    def notes(self, res: dict) -> list[str]:
        """Lines under the tables: conditions, machine, what the columns mean."""
        return []

    def show(self, res: dict) -> None:
        """What the console shows of RES."""
        tbl.print_tables(self.tables(res), self.notes(res))

    def plot(self, res: dict, directory: str) -> list[str]:
        """Write the suite's plots into DIRECTORY; the files written."""
        return []

    def exit_code(self, res: dict) -> int:
        """The command's exit status for RES (1 when a result is wrong or missing)."""
        return 0

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The suite's options and the common ones that apply to it."""
        self.add_options(parser)
        if self.repeat:
            parser.add_argument("--repeat", type=at_least_one, default=self.repeat_default,
                                metavar="K", help="runs per variant; medians reported "
                                f"(default {self.repeat_default})")
        parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
        parser.add_argument("--markdown", metavar="FILE",
                            help="write the tables as Markdown, with the command, the "
                            "commit and the conditions at the top")
        if self.plots:
            parser.add_argument("--plots", metavar="DIR", help="write PNG plots into DIR")

    def run(self, ns: argparse.Namespace) -> int:
        """`foresight bench NAME`: measure, then show and write the results."""
        from foresight.harness.run import prepare

        plots = getattr(ns, "plots", None)
        prepare(ns.json, plots)
        check_writable(ns.markdown)
        res = self.measure(ns)
        with terminations_interrupt():   # a SIGTERM while writing leaves no partial file
            self.show(res)
            if plots:
                for f in self.plot(res, plots):
                    print(f"plot: {f}")
            if ns.json:
                write_json(ns.json, res)
            if ns.markdown:
                write_text(ns.markdown, tbl.markdown(command(ns), res, self.tables(res),
                                                     self.notes(res)))
        return self.exit_code(res)


def command(ns: argparse.Namespace) -> str:
    """The command line that ran, as one would type it again."""
    argv = getattr(ns, "argv", None)
    return "foresight " + shlex.join(sys.argv[1:] if argv is None else argv)


def choose(text: str | None, known: Sequence[str], what: str, option: str) -> list[str]:
    """The names in a comma-separated option (all of KNOWN when it is not given), each
    once, in the order given; UsageError for an unknown one or none at all."""
    names = list(dict.fromkeys(n for n in (text or ",".join(known)).split(",") if n))
    for n in names:
        if n not in known:
            raise UsageError(f"unknown {what} {n!r} (choose from {', '.join(known)})")
    if not names:
        raise UsageError(f"{option} {text!r} names no {what} (choose from "
                         f"{', '.join(known)})")
    return names


# Option types and options several suites have, each with the suite's own default.

def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def at_least_one(text: str) -> int:
    n = _int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def positive(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
    return x


def not_negative(text: str) -> int:
    n = _int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, not {n}")
    return n


def add_cap(parser: argparse.ArgumentParser, mem: str | None, ratio: float | None = None,
            mem_default: str = "") -> None:
    """--mem (default MEM, or MEM_DEFAULT's words), --ratio when the suite sizes its data
    by it (default RATIO) and --readahead-kb: the conditions of an out-of-core run."""
    parser.add_argument("--mem", default=mem, metavar="SIZE",
                        help=f"memory cap, e.g. 256M (default {mem or mem_default})")
    if ratio is not None:
        parser.add_argument("--ratio", type=positive, default=ratio,
                            help=f"data/memory ratio (default {ratio:g})")
    parser.add_argument("--readahead-kb", type=not_negative, default=128, metavar="N",
                        help="read_ahead_kb of the data's disk for the run (default 128, "
                        "Linux's common default)")


def add_kernels(parser: argparse.ArgumentParser, names: str) -> None:
    parser.add_argument("--kernels", default=None, metavar="A,B",
                        help=f"comma-separated: {names} (default all)")


def add_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=positive, default=900, metavar="S",
                        help="time limit per run in seconds (default 900)")
