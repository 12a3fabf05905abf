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
