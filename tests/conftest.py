"""Shared fixtures: the installed runtime and benchmark binaries, a scratch disk dir."""

import atexit
import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from foresight import paths
from foresight.errors import HarnessError
from foresight.harness import environment
from foresight.harness import swap as swapfile

# The tests are of the hints themselves, on data that fit in memory: hinted programs
# keep their hints there (by default a nest runs unhinted while the program fits in its
# memory limit; the tests of that set FORESIGHT_INCORE=skip themselves).
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
# One file per session (its pid in the name), so two sessions never turn off each
# other's; a file whose session is gone (killed) is removed by the next session.
TEST_SWAP_BYTES = 2 << 30


def _bench_base() -> Path:
    return Path(os.environ.get("FORESIGHT_BENCH_DIR", "/var/tmp/foresight-bench"))


def _test_swap_path(pid: int | None = None) -> Path:
    return _bench_base() / f"test-swapfile-{os.getpid() if pid is None else pid}"


def _remove_stale_test_swap() -> None:
    for f in _bench_base().glob("test-swapfile-*"):
        pid = f.name.rsplit("-", 1)[1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() \
                and swapfile.what_is(f) == "ours":
            with contextlib.suppress(HarnessError):
                swapfile.disable(f)


def _ours_active() -> bool:
    mine = os.path.realpath(_test_swap_path())
    return any(os.path.realpath(a["path"]) == mine
               for a in environment.swap_summary()["areas"])


class _TestSwap:
    """The session's temporary swap file: made at most once (a failure, e.g. swapon
    refused in a container, is remembered and skips the tests that need it)."""

    def __init__(self):
        self.failed: str | None = None

    def on(self) -> None:
        if self.failed is None and not _ours_active():
            try:
                swapfile.enable(_test_swap_path(), TEST_SWAP_BYTES)
            except HarnessError as e:
                self.failed = str(e)
        if self.failed is not None:
            pytest.skip(f"needs swap, and the temporary swap file failed: {self.failed}")

    def off(self) -> None:
        if _ours_active():
            r = subprocess.run(["swapoff", str(_test_swap_path())], capture_output=True)
            if r.returncode != 0:
                pytest.skip(f"cannot turn the temporary swap file off: {r.stderr!r}")


@pytest.fixture(scope="session")
def _test_swap_session():
    root = os.geteuid() == 0
    if root:
        _remove_stale_test_swap()
    t = _TestSwap()
    yield t
    if root and swapfile.what_is(_test_swap_path()) == "ours":
        swapfile.disable(_test_swap_path())


@pytest.fixture
def swap(_test_swap_session):
    """At least 1 GiB of free swap: the active swap, else (as root) the session's
    temporary swap file."""
    if environment.swap_free_bytes() >= TEST_SWAP_BYTES // 2:
        return
    if os.geteuid() != 0:
        pytest.skip("needs swap for malloc'd data beyond the cap: `foresight swap enable`")
    _test_swap_session.on()
    if environment.swap_free_bytes() < TEST_SWAP_BYTES // 2:
        pytest.skip("less than 1 GiB of swap is free")


@pytest.fixture
def no_swap(_test_swap_session):
    """No active swap: the session's temporary swap file is turned off (and turned on
    again by the next test that needs it); any other swap: skip."""
    if os.geteuid() == 0:
        _test_swap_session.off()
    if environment.swap_summary()["areas"]:
        pytest.skip("swap is already active")


# The session's own temporary directory, so a test's leftovers are told apart from
# another process's: every command the tests start inherits it (TMPDIR); pytest's
# tmp_path stays where it was.
os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
_SESSION_TMP = tempfile.mkdtemp(prefix="foresight-tests-")
os.environ["TMPDIR"] = _SESSION_TMP
tempfile.tempdir = None
_SESSION_PID = os.getpid()
atexit.register(lambda: os.getpid() == _SESSION_PID and shutil.rmtree(_SESSION_TMP, True))


def _our_temporaries() -> set[str]:
    try:
        return {n for n in os.listdir(_SESSION_TMP) if n.startswith("foresight-")}
    except OSError:
        return set()


@pytest.fixture(autouse=True)
def nothing_left_in_tmp():
    """No test leaves a foresight-* temporary behind (cc's working directory, a
    verdict's, an assembly file, a run's statistics): each is removed by what made it,
    also when a build fails or is interrupted (SIGKILL aside: a test that kills a command
    so gives it a TMPDIR of its own)."""
    before = _our_temporaries()
    yield
    left = _our_temporaries() - before
    assert not left, f"left in the temporary directory: {sorted(left)}"
