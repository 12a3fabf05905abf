"""Shared fixtures: the installed runtime and benchmark binaries, a scratch disk dir."""

import os
import shutil
from pathlib import Path

import pytest

from foresight import paths

# The tests are of the hints themselves, on data that fit in memory: hinted programs
# keep their hints there (by default a nest runs unhinted while the program fits in its
# memory budget; the tests of that set FORESIGHT_INCORE=skip themselves).
os.environ.setdefault("FORESIGHT_INCORE", "hint")


@pytest.fixture
def cc():
    """A C compiler, or skip."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    return compiler


@pytest.fixture
def micro_bin():
    d = paths.libexec_dir()
    if not (d / "micro-hints").exists():
        pytest.fail("benchmark binaries missing: run `make setup`")
    return d


@pytest.fixture
def root():
    if os.geteuid() != 0:
        pytest.skip("needs root")


@pytest.fixture
def disk_tmp(tmp_path_factory):
    """A scratch directory on a real disk (not tmpfs) for page-cache experiments."""
    base = Path(os.environ.get("FORESIGHT_BENCH_DIR", "/var/tmp/foresight-bench"))
    base.mkdir(parents=True, exist_ok=True)
    d = Path(tmp_path_factory.mktemp("disk", numbered=True))
    real = base / d.name
    real.mkdir(exist_ok=True)
    yield real
    shutil.rmtree(real, ignore_errors=True)
