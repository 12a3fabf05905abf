"""`foresight ionode start|stop`: the I/O-node server of paper 3, a real NBD server.

nbdkit serves a disk file through nbdkit-foresight-filter (sharedcache/nbdkit, built on
the same policy core as `foresight sim`) over the file plugin with `cache=none
fadvise=random`, so the server's page cache is no hidden tier: what is cached is in the
filter's `--cache` bytes of RAM.  Clients connect with an export name each (`c0`,
`c1`, ...: the filter's client ids); NBD_CMD_CACHE is their prefetch.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from foresight import paths
from foresight.errors import UsageError
from foresight.units import parse_size

POLICIES = ("none", "plain", "coarse", "fine")


def built_module(name: str, what: str, needs: str) -> Path:
    """The installed nbdkit module NAME; WHAT is not built (it NEEDS a package) if not."""
    path = paths.libexec_dir() / name
    if not path.exists():
        raise UsageError(f"{what} is not built ({path}): run `make setup` (it needs {needs})")
    return path


def filter_path() -> Path:
    return built_module("nbdkit-foresight-filter.so", "the I/O-node filter",
                        "nbdkit-plugin-dev")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("start", "stop"))
    p.add_argument("--socket", metavar="PATH", help="the Unix socket clients connect to")
    p.add_argument("--port", type=int, metavar="N", help="a TCP port instead of a socket")
    p.add_argument("--disk", metavar="FILE", help="the disk file served (start)")
    p.add_argument("--cache", default="64M", help="the node's cache (default 64M)")
    p.add_argument("--block", default="64K", help="its block (default 64K)")
    p.add_argument("--policy", choices=POLICIES, default="fine",
                   help="prefetch control (default fine; none ignores prefetches)")
    p.add_argument("--epoch", default="10000",
                   help="an epoch: N requests or Nms (default 10000)")
    p.add_argument("--disk-delay", metavar="Nus|Nms",
                   help="a disk model: every request to the disk holds it this long first "
                   "(one at a time), as `foresight sim --disk-delay`")
    p.add_argument("--trace", metavar="FILE", help="every request, as a foresight sim trace")
    p.add_argument("--stats", metavar="FILE", help="counters per epoch, as JSON lines")
    p.add_argument("--pidfile", metavar="FILE", required=True,
                   help="the server's pid (written by start, read by stop)")
    p.add_argument("--foreground", action="store_true", help="start: stay in the foreground")


def command(ns: argparse.Namespace) -> list[str]:
    """The nbdkit command line for `start`."""
    if not ns.disk or not Path(ns.disk).is_file():
        raise UsageError(f"--disk {ns.disk!r}: give an existing disk file to serve")
    if (ns.socket is None) == (ns.port is None):
        raise UsageError("give one of --socket PATH and --port N")
    for opt in ("cache", "block"):
        parse_size(getattr(ns, opt))
    if shutil.which("nbdkit") is None:
        raise UsageError("nbdkit is not installed: run `make setup`")
    where = ["-U", ns.socket] if ns.socket else ["-p", str(ns.port)]
    delay = getattr(ns, "disk_delay", None)
    if delay is not None and not re.fullmatch(r"[1-9]\d*(us|ms)", delay):
        raise UsageError(f"--disk-delay {delay!r}: Nus or Nms, e.g. 500us")
    # The device as it is: no page cache of the server's as a hidden tier.  With a disk
    # model the model is the device's whole time: the file is served from the page cache.
    device = [] if delay else ["cache=none", "fadvise=random"]
    cmd = ["nbdkit", *where, "-P", ns.pidfile, "--filter", str(filter_path()), "file",
           f"file={ns.disk}", *device, f"iocache-size={ns.cache}", f"iocache-block={ns.block}",
           f"iocache-policy={ns.policy}", f"iocache-epoch={ns.epoch}"]
    if delay:
        cmd.append(f"iocache-disk-delay={delay}")
    if ns.trace:
        cmd.append(f"iocache-trace={ns.trace}")
    if ns.stats:
        cmd.append(f"iocache-stats={ns.stats}")
    if ns.foreground:
        cmd.insert(1, "-f")
    return cmd


def main(ns: argparse.Namespace) -> int:
    if ns.action == "stop":
        try:
            pid = int(Path(ns.pidfile).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            pid = 0
        if pid <= 1:   # 0 and -1 would signal a process group or everyone
            raise UsageError(f"--pidfile {ns.pidfile}: no server pid in it")
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            raise UsageError(f"no server with pid {pid} (from {ns.pidfile})") from None
        except PermissionError:
            raise UsageError(f"pid {pid} (from {ns.pidfile}) is not yours to stop") from None
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return 0
            time.sleep(0.05)
        raise UsageError(f"the server (pid {pid}) did not stop within 5 s")
    p = subprocess.run(command(ns), stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        raise UsageError(f"nbdkit failed: {lines[-1] if lines else f'exit {p.returncode}'}")
    return 0
