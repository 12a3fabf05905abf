"""Writing results: tables on the console, and result files complete or not at all."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from foresight.errors import UsageError


def write_json(path: str, data: dict) -> None:
    """Write DATA as JSON to PATH atomically (temporary file, then rename)."""
    _write(path, lambda f: json.dump(data, f, indent=2))


def write_text(path: str, text: str) -> None:
    """Write TEXT to PATH atomically, as write_json does."""
    _write(path, lambda f: f.write(text))


def _write(path: str, write: Callable[[TextIO], object]) -> None:
    if os.path.exists(path) and not os.path.isfile(path):
        # /dev/null, a pipe, a terminal: written in place (renaming a file over
        # /dev/null would replace the device with a regular file)
        try:
            with open(path, "w") as f:
                write(f)
        except OSError as e:
            raise UsageError(f"cannot write {path}: {e.strerror}") from None
        return
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException as e:   # Ctrl-C too: no temporary file left behind
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise UsageError(f"cannot write {path}: {e.strerror}") from None
        raise


def check_writable(path: str | None, directory: bool = False) -> None:
    """Refuse, before a long run rather than after it, an output PATH that cannot be
    written: a file (written into its directory), or with DIRECTORY a directory for
    plots (written into it, or into the nearest existing parent it will be made in)."""
    if path is None:
        return
    if not path:
        raise UsageError("cannot write '': the path is empty")
    try:
        full = os.path.abspath(path)
    except OSError as e:  # a relative path from a working directory that was removed
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    if directory:
        if os.path.exists(full) and not os.path.isdir(full):
            raise UsageError(f"cannot write into {path}: not a directory")
        target = full
        while not os.path.lexists(target):
            target = os.path.dirname(target)
    else:
        if os.path.isdir(full):
            raise UsageError(f"cannot write {path}: it is a directory")
        target = os.path.dirname(full)
    if not os.path.isdir(target):
        reason = "not a directory" if os.path.exists(target) else "no such directory"
        raise UsageError(f"cannot write {path}: {target}: {reason}")
    try:  # a real file, not access(): root passes access() on read-only filesystems
        fd, probe = tempfile.mkstemp(prefix=".foresight-probe-", dir=target)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {target}: {e.strerror}") from None
    os.close(fd)
    os.unlink(probe)


def console(stderr: bool = False):
    """A rich console for result tables: the terminal's width on a terminal, and wide
    enough for every column when redirected to a file or pipe (rich would otherwise
    squeeze a wide table into 80 columns and cut its cells)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 200)


def save_figure(fig, directory: str | Path, name: str) -> str:
    """Lay out a matplotlib figure, write it as DIRECTORY/NAME (a PNG) and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    Path(directory).mkdir(parents=True, exist_ok=True)
    out = str(Path(directory) / name)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
