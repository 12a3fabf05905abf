"""The `foresight` command: subcommands and their arguments only; the work lives elsewhere."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from foresight.errors import ForesightError, UsageError, reader_gone


def _config(ns: argparse.Namespace) -> int:
    from foresight import config

    print(config.flags(cflags=ns.cflags, libs=ns.libs))
    return 0


def _run(ns: argparse.Namespace) -> int:
    from foresight.harness import run

    return run.main(ns)


def _ionode(ns: argparse.Namespace) -> int:
    from foresight.sharedcache import ionode

    return ionode.main(ns)


def _cluster(ns: argparse.Namespace) -> int:
    from foresight.sharedcache import cluster

    return cluster.main(ns)


def _color(ns: argparse.Namespace) -> int:
    from foresight.cachesim import probe

    return probe.main(ns)


def _swap(ns: argparse.Namespace) -> int:
    from foresight.harness import swap

    return swap.main(ns)


class _Parser(argparse.ArgumentParser):
    """argparse whose errors read as every other error of the command, on one line
    (`foresight: error: ...`), naming the help to read instead of printing the usage."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def build_parser(bench_suites: bool = True) -> argparse.ArgumentParser:
    """The `foresight` command's parser; the bench suites' subcommands only with
    BENCH_SUITES (importing every suite would slow every other command's start)."""
    p = _Parser(
        prog="foresight",
        description="Compiler-directed I/O prefetching and release for out-of-core programs.",
    )
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("cc", help="the prefetching C compiler: foresight cc [--no-prefetch] "
                   "[--prefetch-thread] [--color] [--report] [--report-json F] [--emit-c DIR] "
                   "[--fs-*] CC-ARGS")
    sub.add_parser("sim", help="simulate clients sharing I/O-node caches on a trace "
                   "(paper 3): foresight sim --trace FILE... [--policy P] [--json OUT]")
    sub.add_parser("cachesim", help="simulate per-CPU L2 caches under a page-mapping policy "
                   "(paper 4): foresight cachesim --cpus N --preset sgi "
                   "[--policy pc|bh|random|cdpc|cdpc-bh] [--map FILE] "
                   "(--trace FILE | --model STEPS) [--json OUT]")
    c = sub.add_parser("config", help="compiler and linker flags for using the runtime")
    c.add_argument("--cflags", action="store_true", help="print the compiler flags")
    c.add_argument("--libs", action="store_true", help="print the linker flags (with rpath)")
    c.set_defaults(func=_config)

    r = sub.add_parser(
        "run",
        help="run a program under a memory cap and measure it",
        description="Run PROG under a memory cap (cgroup v2, v1, or systemd-run) and report "
        "time, faults, I/O and stall; with --json write the measurements as JSON.",
    )
    r.add_argument("--mem", metavar="SIZE",
                   help="memory cap, at least 4M, e.g. 256M (default: no cap)")
    r.add_argument("--cap", choices=("cgroup", "balloon"), default="cgroup",
                   help="how --mem is enforced: a memory cgroup limit on the program "
                   "(default), or a balloon locking the rest of the machine's memory "
                   "(root; the kernel's global reclaim pages the program out)")
    r.add_argument("--cold", action="store_true", help="start with a cold page cache")
    r.add_argument("--file", dest="files", metavar="PATH", action="append", default=[],
                   help="data file the program reads (for --cold without root, and readahead)")
    r.add_argument("--json", metavar="FILE", help="write the measurements as JSON")
    r.add_argument("--readahead-kb", type=int, metavar="N",
                   help="set the block device's read_ahead_kb for the run (restored after)")
    r.add_argument("--repeat", type=int, default=1, metavar="K",
                   help="run K times and report the median and spread")
    r.add_argument("cmd", nargs=argparse.REMAINDER, help="-- PROG ARGS")
    r.set_defaults(func=_run)

    io = sub.add_parser("ionode", help="the shared I/O-node cache as an NBD server "
                        "(paper 3): start or stop it")
    from foresight.sharedcache.ionode import add_arguments as ionode_arguments

    ionode_arguments(io)
    io.set_defaults(func=_ionode)

    cl = sub.add_parser("cluster", help="run a program as N clients of one I/O node "
                        "(paper 3): each on its own nbdfuse view of the node's disk")
    from foresight.sharedcache.cluster import add_arguments as cluster_arguments

    cl_actions = cl.add_subparsers(dest="action", required=True, metavar="run")
    cl_run = cl_actions.add_parser("run", help="start the node, mount, run the clients, "
                                   "clean up")
    cluster_arguments(cl_run)
    cl_run.set_defaults(func=_cluster)

    co = sub.add_parser("color", help="page coloring on this machine (paper 4): probe "
                        "whether its L2 follows the kernel's page colors")
    co_actions = co.add_subparsers(dest="action", required=True, metavar="probe")
    co_probe = co_actions.add_parser("probe", help="time pointer chases over pages of one "
                                     "color and of many in a huge page")
    co_probe.add_argument("--json", metavar="FILE", help="write the result as JSON")
    co_probe.set_defaults(func=_color)

    s = sub.add_parser("swap", help="manage a swap file for anonymous out-of-core data")
    s.add_argument("action", choices=["enable", "disable", "status"])
    s.add_argument("--size", default="8G", help="swap file size for enable (default 8G)")
    s.add_argument("--path", default="/var/lib/foresight/swapfile", help="swap file path")
    s.set_defaults(func=_swap)

    b = sub.add_parser("bench", help="run a benchmark suite (O vs P, tables, JSON, plots)",
                       description="Run a benchmark suite: variants compared in one run, "
                       "shown as tables, written as JSON, Markdown and plots; `foresight "
                       "bench SUITE --help` for a suite's options.")
    for command in sub.choices.values():   # who reports an argument it does not know
        command.set_defaults(parser=command)
    suites = b.add_subparsers(dest="suite", required=True, metavar="SUITE")
    if bench_suites:
        from foresight.bench.registry import SUITES

        for suite in SUITES:
            sp = suites.add_parser(suite.name, help=suite.help, description=suite.description,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            suite.add_arguments(sp)
            sp.set_defaults(func=suite.run, parser=sp)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        return reader_gone()


def _main(argv: list[str]) -> int:
    if argv[:1] == ["cc"]:
        # cc's flags are not argparse's: the driver reads the raw arguments (and --help).
        from foresight.driver.main import run as cc_run

        return cc_run(argv[1:], "foresight cc")
    try:
        if argv[:1] == ["sim"]:
            # the simulator is a C program with its own options, help and errors
            from foresight.sharedcache import sim

            return sim.main(argv[1:])
        if argv[:1] == ["cachesim"]:
            # so is the cache simulator (paper 4)
            from foresight.cachesim import replay

            return replay.main(argv[1:])
        ns, unknown = build_parser(bench_suites=argv[:1] == ["bench"]).parse_known_args(argv)
        if unknown:   # named by the subcommand that does not know them
            ns.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        ns.argv = argv   # the command line, for what the results were made with
        return ns.func(ns)
    except ForesightError as e:
        print(f"foresight: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
