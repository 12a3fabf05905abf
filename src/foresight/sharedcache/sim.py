"""`foresight sim`: the trace-driven simulator of shared I/O-node caches.

The simulator is C (sharedcache/sim, installed as libexec/foresight/foresight-sim by
`make setup`), built on the same policy core as the I/O-node server; this runs it with
the command's arguments as they are, so its options, help and errors are its own.
"""

from __future__ import annotations

import os

from foresight import paths
from foresight.errors import UsageError


def binary() -> str:
    """The installed simulator; a usage error naming `make setup` when it is missing."""
    path = paths.libexec_dir() / "foresight-sim"
    if not os.access(path, os.X_OK):
        raise UsageError(f"the simulator is not built ({path}): run `make setup`")
    return str(path)


def main(argv: list[str]) -> int:
    """Replaces this process with the simulator (its exit status is the command's)."""
    exe = binary()
    os.execv(exe, ["foresight sim", *argv])
    return 2   # not reached
