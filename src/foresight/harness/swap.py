"""`foresight swap enable|disable|status`: a swap file for anonymous out-of-core data.

Programs whose out-of-core data is ordinary malloc'd or static memory page to
swap under a memory cap; without swap the cap kills them.  The file is
created with O_EXCL (nothing that exists is ever truncated), allocated with
fallocate (written with zeros where the filesystem's fallocated files cannot
be swapped on), labelled `foresight` by mkswap and activated with swapon.

Only files that carry our mark are touched afterwards: `disable` removes a
file only when it holds a swap signature ("SWAPSPACE2" at the end of the first
page) and the label `foresight`, and `enable` reuses such a file and refuses
any other existing path.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from pathlib import Path

from foresight.errors import HarnessError, UsageError
from foresight.harness.environment import swap_summary
from foresight.harness.process import terminations_interrupt
from foresight.units import format_size, parse_size

LABEL = "foresight"
_MAGIC = b"SWAPSPACE2"  # the last 10 bytes of a swap area's first page
# struct swap_header_v1_2 after the 1024 boot bytes: version, last_page, nr_badpages
# (4 bytes each), uuid[16], then volume_name[16].
_LABEL_OFFSET, _LABEL_LEN = 1024 + 3 * 4 + 16, 16
MIN_PAGES = 10  # mkswap's minimum ("swap area needs to be at least 40 KiB" on 4 KiB pages)


def _page() -> int:
    return os.sysconf("SC_PAGE_SIZE")


def min_size() -> int:
    return MIN_PAGES * _page()


def _root(action: str) -> None:
    if os.geteuid() != 0:
        raise HarnessError(f"foresight swap {action} needs root")


def _sh(*cmd: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise HarnessError(f"cannot run {cmd[0]}: {e.strerror} (it is part of util-linux)") \
            from None


def _active(path: Path) -> bool:
    return any(a["path"] == os.path.realpath(path) for a in swap_summary()["areas"])


def read_label(path: Path) -> str | None:
    """The label of the swap area in the regular file PATH ('' when it has none), or None
    when PATH holds no swap signature."""
    page = _page()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            head = os.pread(fd, page, 0)
        finally:
            os.close(fd)
    except OSError as e:
        raise HarnessError(f"cannot read {path}: {e.strerror}") from None
    if len(head) < page or head[page - len(_MAGIC):] != _MAGIC:
        return None
    return head[_LABEL_OFFSET:_LABEL_OFFSET + _LABEL_LEN].split(b"\0", 1)[0].decode(
        errors="replace")


def _absolute(path: Path) -> Path:
    try:
        return Path(os.path.abspath(path))
    except OSError as e:  # a relative path from a working directory that was removed
        raise HarnessError(f"cannot resolve {path}: {e.strerror}") from None


def what_is(path: Path) -> str | None:
    """None when nothing is at PATH, "ours" for a swap file foresight made, else what it is."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise HarnessError(f"cannot examine {path}: {e.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat.S_ISDIR(st.st_mode):
        return "a directory"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    label = read_label(path)
    if label is None:
        return "not a swap area"
    if label != LABEL:
        return ("a swap area foresight did not create "
                + (f"(label {label!r})" if label else "(no label)"))
    return "ours"


def _make_parents(directory: Path) -> list[Path]:
    """Create DIRECTORY and its missing parents; the ones created, outermost first."""
    missing = []
    d = directory
    try:
        while not d.exists():
            missing.append(d)
            d = d.parent
    except OSError as e:
        raise HarnessError(f"cannot examine {d}: {e.strerror}") from None
    made: list[Path] = []
    try:
        for d in reversed(missing):
            d.mkdir(mode=0o755)
            made.append(d)
    except OSError as e:
        _remove_dirs(made)
        raise HarnessError(f"cannot create directory {d}: {e.strerror}") from None
    if not directory.is_dir():
        raise HarnessError(f"{directory} is not a directory")
    return made


def _remove_dirs(made: list[Path]) -> None:
    for d in reversed(made):
        with contextlib.suppress(OSError):
            d.rmdir()


def _check_space(directory: Path, size: int) -> None:
    try:
        st = os.statvfs(directory)
    except OSError as e:
        raise HarnessError(f"cannot examine {directory}: {e.strerror}") from None
    free = st.f_bavail * st.f_frsize
    if free < size:
        raise HarnessError(f"not enough free space for a {format_size(size)} swap file in "
                           f"{directory}: {format_size(free)} free")


def _zero_fill(path: Path, ino: int, size: int) -> None:
    """Write zeros over our own file (never truncated, checked to be the inode we made)."""
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if os.fstat(fd).st_ino != ino:
            raise HarnessError(f"{path} was replaced while it was being set up; left alone")
        chunk = b"\0" * (1 << 20)
        done = 0
        while done < size:
            done += os.write(fd, chunk[: min(len(chunk), size - done)])
        os.fsync(fd)
    finally:
        os.close(fd)


def _create(path: Path, size: int) -> None:
    """Make PATH a new, active foresight swap file of SIZE bytes, or leave no trace."""
    made = _make_parents(path.parent)
    ino = None
    try:
        _check_space(path.parent, size)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            raise HarnessError(f"{path} appeared while the swap file was being set up; "
                               "left alone") from None
        try:
            ino = os.fstat(fd).st_ino
            os.posix_fallocate(fd, 0, size)
        except OSError as e:
            raise HarnessError(f"cannot allocate {format_size(size)} at {path}: "
                               f"{e.strerror}") from None
        finally:
            os.close(fd)
        _mkswap(path)
        r = _sh("swapon", str(path))
        if r.returncode != 0:  # e.g. a filesystem with holes in fallocated files
            try:
                _zero_fill(path, ino, size)
            except OSError as e:
                raise HarnessError(f"cannot write {path}: {e.strerror}") from None
            _mkswap(path)
            r = _sh("swapon", str(path))
            if r.returncode != 0:
                raise HarnessError(f"swapon {path} failed: {r.stderr.strip()}")
    except BaseException:
        with contextlib.suppress(OSError):
            if ino is not None and os.lstat(path).st_ino == ino:
                path.unlink()
        _remove_dirs(made)
        raise


def _mkswap(path: Path) -> None:
    r = _sh("mkswap", "-L", LABEL, str(path))
    if r.returncode != 0:
        raise HarnessError(f"mkswap {path} failed: {r.stderr.strip()}")


def enable(path: Path, size: int) -> str:
    """Activate a foresight swap file at PATH, creating it with SIZE bytes if absent."""
    pages = size // _page()
    if pages < MIN_PAGES:
        raise UsageError(f"--size {format_size(size)} is too small: a swap area needs at "
                         f"least {format_size(min_size())} ({MIN_PAGES} pages)")
    size = pages * _page()
    _root("enable")
    path = _absolute(path)
    what = what_is(path)
    if what is None:
        with terminations_interrupt():
            _create(path, size)
        return f"swap enabled: created {path} ({format_size(size)})"
    if _active(path):
        mine = "" if what == "ours" else " (not created by foresight)"
        return f"{path} is already active swap{mine}; nothing done"
    if what != "ours":
        raise HarnessError(f"{path} exists and is {what}; refusing to overwrite it "
                           "(choose another --path)")
    r = _sh("swapon", str(path))
    if r.returncode != 0:
        raise HarnessError(f"swapon {path} failed: {r.stderr.strip()}")
    existing = path.stat().st_size
    note = "" if existing == size else f"; --size {format_size(size)} not applied"
    return f"swap enabled: the existing foresight swap file {path} ({format_size(existing)}{note})"


def disable(path: Path) -> str:
    """Turn off and remove the foresight swap file at PATH; nothing else is touched."""
    _root("disable")
    path = _absolute(path)
    what = what_is(path)
    if what is None:
        return f"no swap file at {path}; nothing done"
    if what != "ours":
        raise HarnessError(f"{path} is {what}; only swap files made by `foresight swap "
                           f"enable` (label {LABEL!r}) are removed; nothing done")
    size = format_size(path.stat().st_size)
    active = _active(path)
    if active:
        r = _sh("swapoff", str(path))
        if r.returncode != 0:
            raise HarnessError(f"swapoff {path} failed: {r.stderr.strip()}")
    try:
        path.unlink()
    except OSError as e:
        raise HarnessError(f"cannot remove {path}: {e.strerror}") from None
    return (f"swap turned off and {path} removed ({size})" if active
            else f"{path} was not active; removed it ({size})")


def status() -> str:
    s = swap_summary()
    if not s["areas"]:
        return "no swap active"
    lines = []
    for a in s["areas"]:
        ours = ""
        with contextlib.suppress(HarnessError):
            if os.path.isfile(a["path"]) and read_label(Path(a["path"])) == LABEL:
                ours = " (foresight)"
        lines.append(f"{a['path']}: {format_size(a['bytes'])}{ours}")
    return "\n".join(lines + [f"total: {format_size(s['total_bytes'])}"])


def main(ns) -> int:
    path = Path(ns.path)
    if ns.action == "enable":
        print(enable(path, parse_size(ns.size)))
    elif ns.action == "disable":
        print(disable(path))
    else:
        print(status())
    return 0
