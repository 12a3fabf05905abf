"""One exception type per layer; the CLI turns any of them into one clear message."""


class ForesightError(Exception):
    """Base of every error Foresight reports to the user."""


class UsageError(ForesightError):
    """Bad command-line input (sizes, paths, options)."""


class HarnessError(ForesightError):
    """The measurement harness could not do what was asked (cgroups, swap, readahead)."""


class BenchError(ForesightError):
    """A benchmark could not be built or run."""


class CompilerError(ForesightError):
    """foresight cc could not do what was asked (bad arguments, unreadable source)."""


def reader_gone(status: int = 1) -> int:
    """After a BrokenPipeError on stdout (`foresight ... | head`): the reader left, which
    is no error of ours.  Point stdout at /dev/null so the interpreter's own flush at exit
    fails no more, and return STATUS."""
    import os
    import sys

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except OSError:
        pass
    return status
