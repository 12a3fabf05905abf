"""Memory caps for measured runs: a child cgroup under the caller's own cgroup.

cgroup v2 is used when its memory controller reaches our cgroup, v1's memory
controller otherwise, and `systemd-run --user --scope` when neither is
writable but a systemd user manager exists.  Both hierarchies are found from
/proc/self/mountinfo and /proc/self/cgroup, whose locations can be overridden
so tests can exercise the v2 path against a fake tree.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from foresight.errors import HarnessError
from foresight.harness.process import alive

_counter = itertools.count()
_OURS = re.compile(r"foresight-(\d+)-\d+")


@dataclass
class Mount:
    version: int  # 1 or 2
    root: Path  # where the hierarchy is mounted
    own: str  # our cgroup's path inside it, e.g. "/user.slice/x"


def _mounts(mountinfo: Path) -> list[tuple[str, Path, set[str]]]:
    """(fstype, mount point, super options) of each cgroup mount."""
    out = []
    for line in mountinfo.read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3 or rfields[0] not in ("cgroup", "cgroup2"):
            continue
        out.append((rfields[0], Path(fields[4]), set(rfields[2].split(","))))
    return out


def _own_paths(proc_cgroup: Path) -> tuple[str | None, str | None]:
    """Our cgroup path in the v2 hierarchy and in v1's memory hierarchy."""
    v2 = v1 = None
    for line in proc_cgroup.read_text().splitlines():
        num, controllers, path = line.split(":", 2)
        if num == "0" and controllers == "":
            v2 = path
        elif "memory" in controllers.split(","):
            v1 = path
    return v2, v1


def find_memory_hierarchy(
    mountinfo: Path = Path("/proc/self/mountinfo"),
    proc_cgroup: Path = Path("/proc/self/cgroup"),
) -> Mount | None:
    """The hierarchy a memory cap can be set in: v2 when it has the memory controller."""
    own_v2, own_v1 = _own_paths(proc_cgroup)
    mounts = _mounts(mountinfo)
    for fstype, point, _ in mounts:
        if fstype == "cgroup2" and own_v2 is not None:
            here = point / own_v2.lstrip("/")
            controllers = here / "cgroup.controllers"
            if controllers.exists() and "memory" in controllers.read_text().split():
                return Mount(2, point, own_v2)
    for fstype, point, opts in mounts:
        if fstype == "cgroup" and "memory" in opts and own_v1 is not None:
            return Mount(1, point, own_v1)
    return None


def systemd_user_manager() -> bool:
    """True when `systemd-run --user` can reach a user manager."""
    if shutil.which("systemd-run") is None or shutil.which("systemctl") is None:
        return False
    try:
        r = subprocess.run(["systemctl", "--user", "is-system-running"], capture_output=True,
                           text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.stdout.strip() in ("running", "degraded")


class Cgroup:
    """One capped cgroup for one run; create, let the child join, read, remove."""

    def __init__(self, mount: Mount, limit_bytes: int | None):
        """limit_bytes None: no limit (the run is capped another way; the cgroup still
        measures its peak and holds what the program leaves behind)."""
        self.mount = mount
        self.limit = limit_bytes
        parent = mount.root / mount.own.lstrip("/")
        sweep_stale(parent)
        self.path = parent / f"foresight-{os.getpid()}-{next(_counter)}"
        try:
            self.path.mkdir()
        except OSError as e:
            raise HarnessError(f"cannot create cgroup {self.path}: {e.strerror}") from None
        try:
            if limit_bytes is None:
                pass
            elif mount.version == 2:
                self._write("memory.max", str(limit_bytes))
                self._write("memory.high", "max")
            else:
                self._write("memory.limit_in_bytes", str(limit_bytes))
                self._write("memory.use_hierarchy", "1", optional=True)
        except HarnessError:
            self.remove()
            raise

    def _write(self, name: str, value: str, optional: bool = False) -> None:
        try:
            (self.path / name).write_text(value)
        except OSError as e:
            if not optional:
                raise HarnessError(f"cannot write {value} to {self.path / name}: "
                                   f"{e.strerror}") from None

    def _read(self, name: str) -> str | None:
        try:
            return (self.path / name).read_text()
        except OSError:
            return None

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def join_self(self) -> None:
        """Move the calling process into the cgroup (runs in the child before exec)."""
        with open(self.procs_file, "w") as f:
            f.write(str(os.getpid()))

    def usage(self) -> int | None:
        text = self._read("memory.current" if self.mount.version == 2 else "memory.usage_in_bytes")
        return int(text) if text and text.strip().isdigit() else None

    def peak(self) -> int | None:
        text = self._read("memory.peak" if self.mount.version == 2
                          else "memory.max_usage_in_bytes")
        return int(text) if text and text.strip().isdigit() else None

    def keep_stats_fresh(self, period: float = 0.01) -> threading.Event:
        """Read the cgroup's memory.stat every PERIOD seconds until the returned event is
        set.  The kernel's reclaim decides whether to deactivate anonymous pages from
        statistics it flushes lazily (every 2 s), and a read flushes them: without it,
        a program thrashing on swap under a v1 limit was OOM-killed with swap free (NAS
        MG's original, 450 MiB under 150 MiB: 2 of 2 runs; 0 of 2 with the reads).  The
        runtime does the same for hinted programs (runtime/src/memcg.c).  Every 10 ms:
        a 16 MiB cgroup turns over in tens of milliseconds (a read costs about 15 us)."""
        stop = threading.Event()
        if self.limit is None:
            stop.set()
            return stop
        path = self.path / "memory.stat"

        def loop() -> None:
            while not stop.wait(period):
                try:
                    with open(path, "rb", buffering=0) as f:
                        while f.read(65536):
                            pass
                except OSError:
                    return

        threading.Thread(target=loop, name="memcg-stats", daemon=True).start()
        return stop

    def oom_kills(self) -> int:
        """OOM kills inside the cgroup (v2 memory.events, v1 memory.oom_control)."""
        text = self._read("memory.events" if self.mount.version == 2 else "memory.oom_control")
        for line in (text or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def pids(self) -> list[int]:
        """The processes in the cgroup."""
        text = self._read("cgroup.procs") or ""
        return [int(p) for p in text.split() if p.isdigit()]

    def kill_leftovers(self, grace: float = 5.0) -> list[dict]:
        """SIGKILL what is still in the cgroup once the measured program has exited (its
        background children) and wait up to GRACE seconds for it to go; returns what was
        found as {pid, command}.  A measurement ends with its program: leftovers would
        hold the cgroup and compete with the next run."""
        found: dict[int, str] = {}
        # v2's cgroup.kill (5.14+) also gets what forks meanwhile; v1 kills pid by pid.
        whole = self.mount.version == 2 and (self.path / "cgroup.kill").exists()
        deadline = time.monotonic() + grace
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                if pid not in found:
                    found[pid] = _command(pid)
                if not whole:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            if whole:
                self._write("cgroup.kill", "1", optional=True)
            time.sleep(0.01)
        return [{"pid": pid, "command": cmd} for pid, cmd in found.items()]

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (retrying while they exit)."""
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
        raise HarnessError(f"cannot remove cgroup {self.path}; remove it by hand with rmdir")

    def close(self) -> tuple[list[dict], str | None]:
        """Kill the leftovers and remove the cgroup: (leftovers, why it could not be removed)."""
        leftovers = self.kill_leftovers()
        try:
            self.remove()
        except HarnessError as e:
            still = ", ".join(str(p) for p in self.pids())
            return leftovers, f"{e}" + (f" (processes still in it: {still})" if still else "")
        return leftovers, None

    def describe(self) -> str:
        return f"v{self.mount.version} {self.path}"


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def sweep_stale(parent: Path) -> None:
    """Remove the cgroups left by `foresight` processes that were killed before they could
    (`foresight-PID-N` whose PID is gone).  The kernel refuses to remove a cgroup that
    still holds processes, so a run that outlived its harness keeps its own."""
    try:
        children = list(parent.iterdir())
    except OSError:
        return
    for child in children:
        m = _OURS.fullmatch(child.name)
        if m is None or alive(int(m.group(1))):
            continue
        try:
            child.rmdir()
        except OSError:
            pass


def systemd_scope_prefix(limit_bytes: int) -> list[str]:
    """Command prefix capping a program in a transient systemd user scope."""
    return ["systemd-run", "--user", "--scope", "--quiet", "-p", f"MemoryMax={limit_bytes}",
            "-p", "MemorySwapMax=infinity", "--"]
