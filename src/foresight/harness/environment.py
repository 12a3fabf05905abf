"""The machine conditions a measurement ran under, recorded with every report.

Readahead, swap readahead (vm.page-cluster), swap, transparent huge pages and
the cgroup version all change how an out-of-core program behaves, so every
report carries them.
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

SYS_BLOCK = Path("/sys/block")


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def block_device_of(path: str | Path) -> str | None:
    """Name of the whole disk (e.g. 'vda') holding PATH, or None (tmpfs, overlay...)."""
    st = os.stat(path)
    sys_dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not sys_dev.exists():
        return None
    real = sys_dev.resolve()
    if (real / "partition").exists():
        real = real.parent
    return real.name


def read_ahead_kb(device: str) -> int | None:
    text = _read(SYS_BLOCK / device / "queue" / "read_ahead_kb")
    return int(text) if text and text.isdigit() else None


def disks() -> dict[str, int]:
    """read_ahead_kb of each disk with a size (zero-sized zram and loop devices skipped)."""
    out = {}
    for dev in sorted(p.name for p in SYS_BLOCK.iterdir()) if SYS_BLOCK.exists() else []:
        size = _read(SYS_BLOCK / dev / "size")
        kb = read_ahead_kb(dev)
        if kb is not None and size not in (None, "0"):
            out[dev] = kb
    return out


def _unescape(field: str) -> str:
    """A path from /proc/swaps, whose spaces, tabs, newlines and backslashes are octal."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def swap_summary() -> dict:
    """Active swap areas and their total size in bytes, from /proc/swaps."""
    lines = (_read("/proc/swaps") or "").splitlines()[1:]
    areas = []
    for line in lines:
        f = line.split()
        if len(f) >= 3:
            areas.append({"path": _unescape(f[0]), "bytes": int(f[2]) * 1024})
    return {"total_bytes": sum(a["bytes"] for a in areas), "areas": areas}


def swap_free_bytes() -> int:
    """Free swap in bytes (SwapFree in /proc/meminfo); 0 when there is none."""
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("SwapFree:"):
            return int(line.split()[1]) * 1024
    return 0


def thp_mode() -> str | None:
    text = _read("/sys/kernel/mm/transparent_hugepage/enabled")
    if text and "[" in text:
        return text.split("[", 1)[1].split("]", 1)[0]
    return text


# FORESIGHT_ variables of the compiler driver and the harness, not of the runtime.
_NOT_RUNTIME = {"FORESIGHT_CC", "FORESIGHT_STATE_DIR", "FORESIGHT_SYS_BLOCK",
                "FORESIGHT_BENCH_DIR"}


def environment(cgroup_version: int | str | None) -> dict:
    """The environment block of a report."""
    return {
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "mem_total_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
        "cgroup_version": cgroup_version,
        "read_ahead_kb": disks(),
        "page_cluster": _int(_read("/proc/sys/vm/page-cluster")),
        "swappiness": _int(_read("/proc/sys/vm/swappiness")),
        "swap": swap_summary(),
        "transparent_hugepage": thp_mode(),
        # The runtime's settings the runs inherit (FORESIGHT_RELEASE=adaptive, ...).
        "foresight_env": {k: v for k, v in sorted(os.environ.items())
                          if k.startswith("FORESIGHT_") and k not in _NOT_RUNTIME},
    }


def settings_text(env: dict) -> str:
    """The runtime settings of a report's environment block, for a table's footer."""
    given = env.get("foresight_env") or {}
    return "; runtime " + " ".join(f"{k}={v}" for k, v in given.items()) if given else ""


def _int(text: str | None) -> int | None:
    return int(text) if text and text.lstrip("-").isdigit() else None
