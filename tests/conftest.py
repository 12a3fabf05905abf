"""Shared fixtures: the installed runtime and benchmark binaries, a scratch disk dir."""

import os
import shutil
from pathlib import Path

import pytest

from foresight import paths
from foresight.harness import environment
from foresight.harness import swap as swapfile

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


# Malloc'd data beyond a memory cap pages to swap: the tests that need it take the `swap`
# fixture, which as root makes a temporary swap file when too little is free (a fresh
# machine, CI), so they run instead of being skipped; it is removed when the session ends.
TEST_SWAP_BYTES = 2 << 30


def _test_swap_path() -> Path:
    return Path(os.environ.get("FORESIGHT_BENCH_DIR", "/var/tmp/foresight-bench")) / "test-swapfile"


def _only_ours_active() -> bool:
    areas = environment.swap_summary()["areas"]
    return bool(areas) and all(Path(a["path"]) == _test_swap_path() for a in areas)


@pytest.fixture(scope="session")
def _test_swap_session():
    yield
    if os.geteuid() == 0 and swapfile.what_is(_test_swap_path()) == "ours":
        swapfile.disable(_test_swap_path())


@pytest.fixture
def swap(_test_swap_session):
    """At least 1 GiB of free swap: the active swap, else (as root) a temporary swap file."""
    if environment.swap_free_bytes() >= TEST_SWAP_BYTES // 2:
        return
    if os.geteuid() != 0:
        pytest.skip("needs swap for malloc'd data beyond the cap: `foresight swap enable`")
    swapfile.enable(_test_swap_path(), TEST_SWAP_BYTES)
    if environment.swap_free_bytes() < TEST_SWAP_BYTES // 2:
        pytest.skip("less than 1 GiB of swap is free")


@pytest.fixture
def no_swap(_test_swap_session):
    """No active swap: the tests' temporary swap file is turned off; any other: skip."""
    if _only_ours_active():
        swapfile.disable(_test_swap_path())
    if environment.swap_summary()["areas"]:
        pytest.skip("swap is already active")
