"""Writing results: tables on the console, and result files complete or not at all."""

from __future__ import annotations

import json
import os
import sys

from foresight.errors import UsageError


def write_json(path: str, data: dict) -> None:
    """Write DATA as JSON to PATH atomically (temporary file, then rename)."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def console(stderr: bool = False):
    """A rich console for result tables: the terminal's width on a terminal, and wide
    enough for every column when redirected to a file or pipe (rich would otherwise
    squeeze a wide table into 80 columns and cut its cells)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)
