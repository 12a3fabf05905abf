"""Where the installed runtime lives: the prefix `make setup` installs it into (the venv)."""

import sys
from pathlib import Path


def prefix() -> Path:
    """Install prefix of libforesight (the virtual environment holding this package)."""
    return Path(sys.prefix)


def include_dir() -> Path:
    return prefix() / "include"


def lib_dir() -> Path:
    return prefix() / "lib"


def libexec_dir() -> Path:
    """Benchmark binaries built by `make setup`."""
    return prefix() / "libexec" / "foresight"


def kernels_dir() -> Path:
    """Sources of the `foresight bench compiler` kernels (installed by `make setup`)."""
    return prefix() / "share" / "foresight" / "kernels"


def nas_dir() -> Path:
    """Sources of the `foresight bench nas` kernels (installed by `make setup`)."""
    return prefix() / "share" / "foresight" / "nas"
