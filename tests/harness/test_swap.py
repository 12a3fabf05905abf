"""`foresight swap`: enable and disable a (small) swap file; status without root.  Only
files foresight made (swap signature and label `foresight`) are ever reused or removed;
every failure is one line and leaves nothing it created behind."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foresight.cli import main
from foresight.harness.environment import swap_summary


def active(path: Path) -> bool:
    return any(a["path"] == str(path) for a in swap_summary()["areas"])


@pytest.fixture
def swap_dir(root, disk_tmp):
    """A scratch directory on disk whose swap areas are turned off afterwards."""
    yield disk_tmp
    for a in swap_summary()["areas"]:
        if a["path"].startswith(str(disk_tmp)):
            subprocess.run(["swapoff", a["path"]], check=False)


def foresight(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "foresight.cli", *args], capture_output=True,
                          text=True)


def one_line_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr


def test_enable_then_disable(swap_dir, capsys):
    path = swap_dir / "swapfile"
    assert main(["swap", "enable", "--size", "64M", "--path", str(path)]) == 0
    assert active(path)
    assert main(["swap", "status"]) == 0
    assert f"{path}: 64.0 MiB (foresight)" in capsys.readouterr().out
    assert main(["swap", "disable", "--path", str(path)]) == 0
    assert "turned off and" in capsys.readouterr().out
    assert not active(path)
    assert not path.exists()


def test_bad_size_is_a_clear_error(capsys):
    assert main(["swap", "enable", "--size", "huge", "--path", "/nonexistent/x"]) == 2
    assert "not a size" in capsys.readouterr().err


def test_too_small_a_size_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "s"
    r = foresight("swap", "enable", "--size", "4K", "--path", str(path))
    one_line_error(r, "too small", "at least 40.0 KiB")
    assert not path.exists()


def test_enable_never_overwrites_an_existing_file(swap_dir):
    path = swap_dir / "existing.dat"
    path.write_text("precious data\n")
    r = foresight("swap", "enable", "--size", "64M", "--path", str(path))
    one_line_error(r, "is not a swap area", "refusing to overwrite")
    assert path.read_text() == "precious data\n"
    assert not active(path)


def test_disable_removes_only_swap_files_foresight_made(swap_dir):
    notes = swap_dir / "notes.txt"
    notes.write_text("notes\n")
    one_line_error(foresight("swap", "disable", "--path", str(notes)), "not a swap area",
                   "nothing done")
    assert notes.read_text() == "notes\n"
    # A swap area someone else made (no label): not ours either.
    foreign = swap_dir / "foreign.swap"
    with open(foreign, "wb") as f:
        f.truncate(1 << 20)
    subprocess.run(["mkswap", str(foreign)], check=True, capture_output=True)
    before = foreign.read_bytes()
    one_line_error(foresight("swap", "disable", "--path", str(foreign)), "did not create")
    one_line_error(foresight("swap", "enable", "--path", str(foreign)), "refusing")
    assert foreign.read_bytes() == before
    link = swap_dir / "link"
    link.symlink_to(notes)
    one_line_error(foresight("swap", "disable", "--path", str(link)), "symbolic link")
    assert link.is_symlink() and notes.exists()


def test_an_inactive_foresight_swap_file_is_reused_then_removed(swap_dir):
    path = swap_dir / "ours.swap"
    path.write_bytes(bytes(1 << 20))   # no holes: swapon refuses files with holes
    os.chmod(path, 0o600)
    subprocess.run(["mkswap", "-L", "foresight", str(path)], check=True, capture_output=True)
    r = foresight("swap", "enable", "--size", "64M", "--path", str(path))
    assert r.returncode == 0 and "existing foresight swap file" in r.stdout, r.stderr
    assert "not applied" in r.stdout and active(path)
    subprocess.run(["swapoff", str(path)], check=True)
    r = foresight("swap", "disable", "--path", str(path))
    assert r.returncode == 0 and "was not active; removed it" in r.stdout, r.stderr
    assert not path.exists()


def test_a_path_with_a_space_is_recognized_as_active(swap_dir):
    # /proc/swaps writes the space as \040.
    path = swap_dir / "with space" / "swap file"
    assert foresight("swap", "enable", "--size", "16M", "--path", str(path)).returncode == 0
    assert active(path)
    r = foresight("swap", "enable", "--size", "16M", "--path", str(path))
    assert r.returncode == 0 and "already active" in r.stdout, r.stderr
    assert active(path)
    assert foresight("swap", "disable", "--path", str(path)).returncode == 0
    assert not path.exists()


def test_unusable_paths_are_one_line_errors_that_create_nothing(root, tmp_path):
    one_line_error(foresight("swap", "enable", "--size", "1M", "--path", "/proc/foo/s"),
                   "cannot create directory /proc/foo")
    one_line_error(foresight("swap", "enable", "--size", "1M", "--path", str(tmp_path)),
                   "is a directory")
    one_line_error(foresight("swap", "enable", "--size", "1M", "--path", "/etc/passwd/x"),
                   "Not a directory")
    one_line_error(foresight("swap", "enable", "--size", "100T", "--path",
                             str(tmp_path / "a" / "s")), "not enough free space")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_swapon_removes_only_what_it_created(root):
    shm = Path("/dev/shm")
    mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    if ["/dev/shm", "tmpfs"] not in mounts:
        pytest.skip("no tmpfs at /dev/shm")
    base = shm / f"foresight-swap-test-{os.getpid()}"
    base.mkdir()
    try:
        # tmpfs cannot hold swap: mkswap succeeds, swapon fails, even after zero-filling.
        r = foresight("swap", "enable", "--size", "1M", "--path", str(base / "a" / "b" / "s"))
        one_line_error(r, "swapon")
        assert base.is_dir() and list(base.iterdir()) == []
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", str(base)], check=False)


def test_a_relative_path_from_a_removed_directory_is_a_clear_error(root, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    for action in ("enable", "disable"):
        r = subprocess.run(f"cd {gone} && rmdir {gone} && {sys.executable} -m foresight.cli "
                           f"swap {action} --size 1M --path rel", shell=True,
                           capture_output=True, text=True, env={**os.environ,
                                                                "PYTHONSAFEPATH": "1"})
        one_line_error(r, "cannot resolve rel")
        gone.mkdir()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_enable_removes_what_it_created(swap_dir, tmp_path, sig):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "mkswap").write_text("#!/bin/sh\nexec sleep 30\n")   # holds enable mid-way
    (fake / "mkswap").chmod(0o755)
    path = swap_dir / "new" / "swapfile"
    p = subprocess.Popen([sys.executable, "-m", "foresight.cli", "swap", "enable", "--size",
                          "16M", "--path", str(path)], stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"},
                         # delivered as from a terminal, also where this suite runs
                         # ignoring it (a background job ignores SIGINT)
                         preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
    for _ in range(400):
        if path.exists():
            break
        time.sleep(0.05)
    assert path.exists()
    p.send_signal(sig)
    assert p.wait(timeout=20) == 130
    assert "Traceback" not in p.stderr.read()
    assert not (swap_dir / "new").exists()
