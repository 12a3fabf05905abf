"""`foresight cachesim`: the C cache simulator on a trace (`--trace FILE`) or on a color
map's loops (`--model STEPS`).  The command's arguments go to the installed binary as
they are, so its options, help and one-line errors (exit status 2) are its own.
"""

from __future__ import annotations

import os

from foresight import paths
from foresight.errors import UsageError

NAME = "foresight-cachesim"


def binary() -> str:
    """The installed simulator; a usage error naming `make setup` when it is missing."""
    path = paths.libexec_dir() / NAME
    if not os.access(path, os.X_OK):
        raise UsageError(f"the cache simulator is not built ({path}): run `make setup`")
    return str(path)


def main(argv: list[str]) -> int:
    """Replaces this process with the simulator (its exit status is the command's)."""
    exe = binary()
    os.execv(exe, ["foresight cachesim", *argv])
    return 2   # not reached
