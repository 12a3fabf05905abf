"""`foresight swap enable|disable|status`: a swap file for anonymous out-of-core data.

Programs whose out-of-core data is ordinary malloc'd or static memory page to
swap under a memory cap; without swap the cap kills them.  The file is
allocated with fallocate (written with zeros where the filesystem's
fallocated files cannot be swapped on) and activated with mkswap/swapon.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from foresight.errors import HarnessError
from foresight.harness.environment import swap_summary
from foresight.units import format_size, parse_size


def _root(action: str) -> None:
    if os.geteuid() != 0:
        raise HarnessError(f"foresight swap {action} needs root")


def _sh(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def _active(path: Path) -> bool:
    return any(a["path"] == str(path) for a in swap_summary()["areas"])


def enable(path: Path, size: int) -> str:
    _root("enable")
    if _active(path):
        return f"swap file {path} is already active"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    tmp.unlink(missing_ok=True)
    try:
        with open(tmp, "wb") as f:
            os.fchmod(f.fileno(), 0o600)
            try:
                os.posix_fallocate(f.fileno(), 0, size)
            except OSError as e:
                raise HarnessError(f"cannot allocate {format_size(size)} at {tmp}: "
                                   f"{e.strerror}") from None
        os.replace(tmp, path)
        r = _sh("mkswap", str(path))
        if r.returncode != 0:
            raise HarnessError(f"mkswap {path} failed: {r.stderr.strip()}")
        r = _sh("swapon", str(path))
        if r.returncode != 0:  # e.g. a filesystem with holes in fallocated files
            with open(path, "wb") as f:
                chunk = b"\0" * (1 << 20)
                for _ in range(size // len(chunk)):
                    f.write(chunk)
            _sh("mkswap", str(path))
            r = _sh("swapon", str(path))
            if r.returncode != 0:
                path.unlink(missing_ok=True)
                raise HarnessError(f"swapon {path} failed: {r.stderr.strip()}")
    finally:
        tmp.unlink(missing_ok=True)
    return f"swap enabled: {path} ({format_size(size)})"


def disable(path: Path) -> str:
    _root("disable")
    if _active(path):
        r = _sh("swapoff", str(path))
        if r.returncode != 0:
            raise HarnessError(f"swapoff {path} failed: {r.stderr.strip()}")
    if path.exists():
        path.unlink()
        return f"swap disabled and {path} removed"
    return f"no swap file at {path}"


def status() -> str:
    s = swap_summary()
    if not s["areas"]:
        return "no swap active"
    lines = [f"{a['path']}: {format_size(a['bytes'])}" for a in s["areas"]]
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
