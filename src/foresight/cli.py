"""The `foresight` command: subcommands and their arguments only; the work lives elsewhere."""

from __future__ import annotations

import argparse
import sys

from foresight.errors import ForesightError


def _config(ns: argparse.Namespace) -> int:
    from foresight import config

    print(config.flags(cflags=ns.cflags, libs=ns.libs))
    return 0


def _run(ns: argparse.Namespace) -> int:
    from foresight.harness import run

    return run.main(ns)


def _swap(ns: argparse.Namespace) -> int:
    from foresight.harness import swap

    return swap.main(ns)


def _bench(ns: argparse.Namespace) -> int:
    from foresight.bench import suites

    return suites.main(ns)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="foresight",
        description="Compiler-directed I/O prefetching and release for out-of-core programs.",
    )
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("cc", help="the prefetching C compiler: foresight cc [--no-prefetch] "
                   "[--report] [--report-json F] [--emit-c DIR] [--fs-*] CC-ARGS")
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

    s = sub.add_parser("swap", help="manage a swap file for anonymous out-of-core data")
    s.add_argument("action", choices=["enable", "disable", "status"])
    s.add_argument("--size", default="8G", help="swap file size for enable (default 8G)")
    s.add_argument("--path", default="/var/lib/foresight/swapfile", help="swap file path")
    s.set_defaults(func=_swap)

    b = sub.add_parser("bench", help="run a benchmark suite (O vs P, tables, JSON, plots)")
    b.add_argument("suite", choices=["demo", "micro", "overhead", "compiler", "nas", "compile"])
    b.add_argument("--kernels", default=None,
                   help="comma-separated kernels (compiler: stencil,stencil_rows,gather,"
                   "matvec_t,colsum,bucket_sort,rowptr,walk; nas: is,cg,ep,ft,mg,lu,sp,bt; "
                   "demo: heat,spmv,scan; compile: any of nas' and compiler's, or none)")
    b.add_argument("--mem", default=None,
                   help="memory cap (micro, compiler: default 256M; demo: 128M; nas: per "
                   "--size)")
    b.add_argument("--size", default="default",
                   help="nas: test, default (64M cap, 3x data) or paper (Table V ratios)")
    b.add_argument("--sweep", metavar="IS", help="nas: also the IS size sweep (Figure 19) and "
                   "in-core cold/warm runs (Figure 15)")
    b.add_argument("--backing", default="anon", help="nas: anon (swap) or file")
    b.add_argument("--timeout", type=float, default=900,
                   help="nas, compile: time limit per run in seconds (default 900)")
    b.add_argument("--lines", default=None,
                   help="compile: line counts of the generated many-nest files, "
                   "comma-separated, or none (default 250,1000,2000)")
    b.add_argument("--ratio", type=float, default=None,
                   help="data/memory ratio (micro, compiler: default 4; demo: 3)")
    b.add_argument("--readahead-kb", type=int, default=128,
                   help="read_ahead_kb for the run (micro, compiler, demo; default 128, Linux's "
                   "common default)")
    b.add_argument("--patterns", default="backward,strided,indirect,forward",
                   help="comma-separated access patterns (micro)")
    b.add_argument("--backings", default="file,anon", help="comma-separated: file, anon (micro)")
    b.add_argument("--repeat", type=int, default=1, help="runs per variant; medians reported")
    b.add_argument("--json", metavar="FILE", help="write results as JSON")
    b.add_argument("--plots", metavar="DIR", help="write PNG plots into DIR")
    b.set_defaults(func=_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["cc"]:
        # cc's flags are not argparse's: the driver reads the raw arguments (and --help).
        from foresight.driver.main import run as cc_run

        return cc_run(argv[1:], "foresight cc")
    ns = build_parser().parse_args(argv)
    try:
        return ns.func(ns)
    except ForesightError as e:
        print(f"foresight: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
