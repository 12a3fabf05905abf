"""Process helpers of the harness: whether a process still exists (for state a killed
harness left behind: its cgroups, its hold on a disk's readahead setting), and turning
termination signals into an exception so that cleanup code runs."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # someone else's process: it exists
        return True
    return True


@contextlib.contextmanager
def terminations_interrupt() -> Iterator[None]:
    """Within the block SIGTERM and SIGHUP raise KeyboardInterrupt, as SIGINT does, so
    `finally` and `except` clauses undo what was half done (their default action would
    end the process on the spot)."""
    def interrupt(_sig, _frame):
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
