"""Whether a process still exists: for state a killed harness left behind (its cgroups,
its hold on a disk's readahead setting)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # someone else's process: it exists
        return True
    return True
