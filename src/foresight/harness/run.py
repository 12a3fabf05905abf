"""`foresight run`: run a program under a memory cap and measure it.

One run: optionally drop the page cache, create a capped cgroup, start the
program inside it (it joins before exec), forward signals, wait for it with
waitid(WNOWAIT) so its /proc entries can still be read as a zombie, then reap
it with wait4 for the resource usage.

I/O stall is the time the program's main thread spent blocked — neither
running nor runnable — measured by the scheduler (/proc/PID/task/PID/schedstat:
wall − on-CPU − run-queue wait).  For the out-of-core programs we measure,
the main thread blocks only on I/O: page faults waiting for a read, swap-ins,
synchronous reads.  wall − user − sys would be wrong once the runtime's worker
threads run on the other core, and the kernel's delay accounting
(/proc/PID/stat field 42) over-counts on this kernel when other threads of the
process read (measured: 9.8 s of "blkio delay" in a 0.63 s run), so it is not
used.  The runtime's workers are excluded on purpose: their waits overlap the
computation.  See docs/harness.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from foresight.errors import HarnessError, UsageError
from foresight.harness import cgroup as cg
from foresight.harness import environment, readahead
from foresight.harness.balloon import Balloon
from foresight.harness.pagecache import cached_pages
from foresight.reports import check_writable, console, write_json
from foresight.units import format_size, parse_size

# The measurements of one run, in report order: key, label, unit kind.
FIELDS = [
    ("wall_seconds", "wall", "s"),
    ("user_seconds", "user", "s"),
    ("sys_seconds", "sys", "s"),
    ("io_stall_seconds", "I/O stall (main thread)", "s"),
    ("major_faults", "major faults", "n"),
    ("minor_faults", "minor faults", "n"),
    ("read_bytes", "read from storage", "b"),
    ("write_bytes", "file data written", "b"),
    ("swap_in_bytes", "swapped in (system-wide)", "b"),
    ("swap_out_bytes", "swapped out (system-wide)", "b"),
    ("peak_memory_bytes", "peak memory (cgroup)", "b"),
    ("exit_code", "exit code", "n"),
]
# The smallest --mem accepted.  Measured under cgroup v1 here: `true` and `sh -c true` run
# in 256 KiB, a hinted program with libforesight (its binary and library not cached) in
# 768 KiB; libc and the loader, if not cached either, add at most their 2.1 MiB of file.
# Below 4 MiB a cap kills programs for loading, not for their data.
MIN_MEM = 4 << 20
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)


def _cached_at_start(files: list[str]) -> int | None:
    """Pages of the named data files in the page cache (None: none could be counted)."""
    counts = [n for n in (cached_pages(f) for f in files) if n is not None]
    return sum(counts) if counts else None


def drop_caches(files: list[str]) -> str:
    """Start cold: drop the whole page cache as root, else evict FILES. Returns how."""
    for f in files:
        try:
            fd = os.open(f, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block us
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        except OSError as e:
            raise HarnessError(f"--cold: cannot evict {f} from the page cache: "
                               f"{e.strerror}") from None
    if os.geteuid() == 0:
        os.sync()
        try:
            Path("/proc/sys/vm/drop_caches").write_text("1")
        except OSError as e:
            raise HarnessError(f"--cold: cannot drop the page cache: {e.strerror}") from None
        return "drop_caches"
    if not files:
        raise HarnessError("--cold needs root (to drop the page cache) or the program's "
                           "data files named with --file (to evict them)")
    return "fadvise"


def _main_thread_blocked(pid: int, wall: float) -> float | None:
    """Seconds the main thread was blocked: wall − on-CPU − run-queue wait (schedstat)."""
    try:
        run_ns, wait_ns, _ = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return None
    return max(0.0, wall - int(run_ns) / 1e9 - int(wait_ns) / 1e9)


def _io_bytes(pid: int) -> tuple[int | None, int | None]:
    """(bytes read from storage, swap-ins included; file bytes dirtied less those
    cancelled by truncation) from /proc/PID/io."""
    try:
        io = {k: int(v) for k, v in (line.split(":") for line in
                                     Path(f"/proc/{pid}/io").read_text().splitlines())}
    except (OSError, ValueError):
        return None, None
    written = io.get("write_bytes")
    if written is not None:
        written = max(0, written - io.get("cancelled_write_bytes", 0))
    return io.get("read_bytes"), written


def vmstat_swap() -> dict[str, int]:
    """The system's swap-in and swap-out counters (pages) from /proc/vmstat."""
    try:
        text = Path("/proc/vmstat").read_text()
    except OSError:
        return {}
    return parse_vmstat(text, ("pswpin", "pswpout"))


def parse_vmstat(text: str, keys: tuple[str, ...]) -> dict[str, int]:
    """KEYS' values in /proc/vmstat's `name value` lines (those present)."""
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in keys and value.strip().isdigit():
            out[name] = int(value)
    return out


def swap_traffic(before: dict[str, int], after: dict[str, int],
                 page_size: int) -> tuple[int | None, int | None]:
    """Bytes swapped in and out between two vmstat_swap() readings (system-wide
    counters: other processes' swapping counts too); None where a reading lacks one."""
    def delta(key: str) -> int | None:
        if key not in before or key not in after:
            return None
        return max(0, after[key] - before[key]) * page_size
    return delta("pswpin"), delta("pswpout")


def check_mem(mem: int) -> None:
    if mem < MIN_MEM:
        raise UsageError(f"--mem {format_size(mem)} is too small: the cap must be at least "
                         f"{format_size(MIN_MEM)} (the loader, libc and the runtime alone "
                         "need about 1 MiB before the program touches its data)")


# How --mem is enforced: a memory cgroup limit on the program (cgroup v2, v1, or a
# systemd scope), or a balloon locking the rest of the machine's memory (harness/balloon.py).
CAPS = ("cgroup", "balloon")


class Cap:
    """How a run is capped: a cgroup we own, a systemd scope, a balloon, or nothing."""

    def __init__(self, mem: int | None, kind: str = "cgroup"):
        self.cgroup: cg.Cgroup | None = None
        self.prefix: list[str] = []
        self.version: int | str | None = None
        self.balloon: Balloon | None = None
        if mem is None:
            return
        mount = cg.find_memory_hierarchy()
        error = "no memory cgroup controller is mounted"
        if kind == "balloon":
            # The program's own cgroup, unlimited, still measures its peak and holds
            # what it leaves behind.
            if mount is not None:
                with contextlib.suppress(HarnessError):
                    self.cgroup = cg.Cgroup(mount, None)
                    self.version = mount.version
            try:
                self.balloon = Balloon(mem)
            except BaseException:
                self.close()
                raise
            return
        if mount is not None:
            try:
                self.cgroup = cg.Cgroup(mount, mem)
                self.version = mount.version
                return
            except HarnessError as e:
                error = str(e)
        if cg.systemd_user_manager():
            self.prefix = cg.systemd_scope_prefix(mem)
            self.version = "systemd-run"
            return
        raise HarnessError(f"--mem {format_size(mem)} cannot be enforced: {error}, and no "
                           "systemd user manager is running; refusing to run uncapped")

    def describe(self) -> str | None:
        if self.balloon:
            return self.balloon.describe()
        if self.cgroup:
            return self.cgroup.describe()
        return "systemd-run --user --scope" if self.prefix else None

    def close(self) -> tuple[list[dict], str | None]:
        """After the program: kill what it left in our cgroup and remove the cgroup,
        deflate the balloon; (leftover processes, why the cgroup could not be removed)."""
        if self.balloon:
            self.balloon.close()
        return self.cgroup.close() if self.cgroup else ([], None)


def run_once(cmd: list[str], mem: int | None = None, cold: bool = False,
             files: list[str] | None = None, env: dict | None = None,
             timeout: float | None = None, capture: bool = False,
             cap: str = "cgroup") -> dict:
    """Run CMD once and return its measurements (the JSON keys of `foresight run`).

    With CAPTURE the program's stdout and stderr are returned in the result
    (through files, so a chatty program cannot block on a full pipe).  CAP says how
    MEM is enforced (CAPS)."""
    files = files or []
    if mem is not None:
        check_mem(mem)
    cold_how = drop_caches(files) if cold else None
    cached = _cached_at_start(files) if cold else None
    if cached:
        drop_caches(files)          # once more: dirty pages were being written back
        cached = _cached_at_start(files)
    try:
        stats_dir = tempfile.mkdtemp(prefix="foresight-run-")
    except OSError as e:
        raise HarnessError(f"cannot create a temporary directory: {e.strerror}") from None
    stats_path = os.path.join(stats_dir, "runtime.json")
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("FORESIGHT_STATS", stats_path)
    try:
        cap_kind = cap
        cap = Cap(mem, cap_kind)
        try:
            if not capture:
                result = _spawn_and_measure(cmd, cap, child_env, stats_path, timeout,
                                            cold_how, mem)
            else:
                with open(os.path.join(stats_dir, "out"), "w+", errors="replace") as out, \
                        open(os.path.join(stats_dir, "err"), "w+", errors="replace") as err:
                    result = _spawn_and_measure(cmd, cap, child_env, stats_path, timeout,
                                                cold_how, mem, stdout=out, stderr=err)
                    out.seek(0)
                    err.seek(0)
                    result["stdout"], result["stderr"] = out.read(), err.read()
        except BaseException:
            _, problem = cap.close()
            if problem:
                print(f"foresight: warning: {problem}", file=sys.stderr)
            raise
        # The measurement is complete; what the program left behind is reported with it.
        result["leftover_processes"], result["cgroup_not_removed"] = cap.close()
        result["cold_cached_pages"] = cached
        return result
    finally:
        shutil.rmtree(stats_dir, ignore_errors=True)


def _signal(pid: int, pidfd: int | None, sig: int) -> None:
    """SIG to the program: through its pidfd, which names it even once it has been
    waited for (then nothing is sent), else by pid."""
    try:
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, OSError):
        pass


def _spawn_and_measure(cmd, cap, env, stats_path, timeout, cold_how, mem, stdout=None,
                       stderr=None) -> dict:
    swap0 = vmstat_swap()
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cap.prefix + cmd, env=env, stdout=stdout, stderr=stderr,
                                preexec_fn=cap.cgroup.join_self if cap.cgroup else None)
    except FileNotFoundError:
        raise HarnessError(f"cannot run {cmd[0]!r}: no such program") from None
    except PermissionError:
        raise HarnessError(f"cannot run {cmd[0]!r}: permission denied") from None
    except OSError as e:  # not an executable format, too many arguments, no memory...
        raise HarnessError(f"cannot run {cmd[0]!r}: {e.strerror}") from None
    except subprocess.SubprocessError as e:
        raise HarnessError(f"cannot start {cmd[0]!r} in {cap.describe()}: {e}") from None
    # Signals reach the program through a pidfd (_signal), not Popen.send_signal or kill,
    # which poll() first: that reaped the program between the waitid below (WNOWAIT: it
    # stays a zombie) and wait4, whose rusage the run reports (ChildProcessError, a
    # traceback, about 1 SIGTERM in 10: a helper's probe); a pid alone could be another
    # process's once wait4 has reaped it.
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    previous = {s: signal.signal(s, lambda sig, _f: _signal(proc.pid, pidfd, sig))
                for s in FORWARDED}
    fresh, timer, expired = None, None, threading.Event()
    try:
        fresh = cap.cgroup.keep_stats_fresh() if cap.cgroup else None
        if timeout:
            timer = threading.Timer(timeout, lambda: (expired.set(),
                                                      _signal(proc.pid, pidfd, signal.SIGKILL)))
            timer.start()
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        wall = time.perf_counter() - t0
        stall = _main_thread_blocked(proc.pid, wall)
        read_bytes, write_bytes = _io_bytes(proc.pid)
        swap_in, swap_out = swap_traffic(swap0, vmstat_swap(), os.sysconf("SC_PAGE_SIZE"))
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        if fresh is not None:
            fresh.set()
        if timer:
            timer.cancel()
        for s, h in previous.items():
            signal.signal(s, h)
        if pidfd is not None:
            os.close(pidfd)
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    result = {
        "command": cmd,
        "wall_seconds": wall,
        "user_seconds": usage.ru_utime,
        "sys_seconds": usage.ru_stime,
        "io_stall_seconds": stall,
        "major_faults": usage.ru_majflt,
        "minor_faults": usage.ru_minflt,
        "read_bytes": read_bytes,
        "write_bytes": write_bytes,
        "swap_in_bytes": swap_in,
        "swap_out_bytes": swap_out,
        "peak_memory_bytes": cap.cgroup.peak() if cap.cgroup else None,
        "exit_code": code if code >= 0 else 128 - code,
        "signal": signal_name(-code) if code < 0 else None,
        "oom_killed": False,
        "timed_out": expired.is_set(),
        "mem_limit_bytes": mem,
        "cold": cold_how,
        "cgroup": cap.describe(),
        "cgroup_version": cap.version,
        # How --mem was enforced, and whether a balloon died during the run (the
        # program then ran uncapped: the measurement does not hold).
        "cap": None if mem is None else "balloon" if cap.balloon else "cgroup",
        "balloon_bytes": cap.balloon.locked if cap.balloon else None,
        "cap_lost": bool(cap.balloon and cap.balloon.lost()),
    }
    if cap.cgroup and (cap.cgroup.oom_kills() > 0):
        result["oom_killed"] = True
    try:
        result["runtime"] = json.loads(Path(stats_path).read_text())
    except (OSError, ValueError):
        result["runtime"] = None
    return result


def signal_name(number: int) -> str:
    """SIGTERM, SIGRTMIN+3, ... (Python names only SIGRTMIN and SIGRTMAX)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        if signal.SIGRTMIN < number < signal.SIGRTMAX:
            return f"SIGRTMIN+{number - signal.SIGRTMIN}"
        return f"signal {number}"


def summarize(runs: list[dict]) -> dict:
    """Median of each measurement over RUNS, its spread, and the runs themselves."""
    out = dict(runs[-1])
    spread = {}
    for key, _, _ in FIELDS:
        values = [r[key] for r in runs if r.get(key) is not None]
        if values and key != "exit_code":
            out[key] = statistics.median(values)
            spread[key] = {"min": min(values), "max": max(values)}
    out["repeat"] = len(runs)
    out["spread"] = spread
    out["runs"] = runs
    return out


def devices_for(files: list[str]) -> list[str]:
    """Disks whose readahead matters: those holding the data files and the working dir."""
    try:
        devs = {environment.block_device_of(p) for p in [*files, os.getcwd()]}
    except OSError as e:
        raise HarnessError(f"cannot find the disk of {e.filename or 'the working directory'}: "
                           f"{e.strerror}") from None
    return sorted(d for d in devs if d and (readahead.sys_block() / d).exists())


def measure(cmd: list[str], mem: int | None = None, cold: bool = False,
            files: list[str] | None = None, readahead_kb: int | None = None,
            env: dict | None = None, timeout: float | None = None, repeat: int = 1,
            cap: str = "cgroup") -> dict:
    """Run CMD REPEAT times under the given conditions; the full `foresight run` report."""
    files = files or []
    setting = (readahead.Setting(devices_for(files), readahead_kb)
               if readahead_kb is not None else contextlib.nullcontext())
    runs = []
    with setting:
        env_block = environment.environment(None)
        for _ in range(repeat):
            r = run_once(cmd, mem=mem, cold=cold, files=files, env=env, timeout=timeout,
                         cap=cap)
            runs.append(r)
            if r["exit_code"] != 0 or r["cap_lost"]:
                break
    report = summarize(runs)
    env_block["cgroup_version"] = report["cgroup_version"]
    report["environment"] = env_block
    return report


def explain_failure(report: dict) -> str | None:
    if any(r.get("cap_lost") for r in report.get("runs", [report])):
        return ("the balloon holding the machine's memory was killed (the kernel's OOM "
                "killer takes it first) and the program ran without a cap: the "
                "measurement does not hold.  Free memory on the machine, or use a larger "
                "--mem.")
    if report["oom_killed"] and report.get("cap") == "balloon":
        return ("the program was killed by the kernel's out-of-memory killer with the "
                "balloon in place: memory and swap together could not hold it.")
    if report["oom_killed"]:
        cap = format_size(report["mem_limit_bytes"] or 0)
        free = environment.swap_free_bytes()
        if not free:
            return ("the program was killed by the out-of-memory killer: its anonymous memory "
                    f"does not fit in the {cap} cap and there is no swap to page it to.  "
                    "Enable swap with `foresight swap enable --size 8G` (root), or raise --mem.")
        return ("the program was killed by the out-of-memory killer under the "
                f"{cap} cap although {format_size(free)} of swap is free: either memory that "
                "cannot be swapped (locked, or kernel memory) filled the cap, or the memory "
                "cgroup gave up reclaiming while the program thrashed (seen with cgroup v1 "
                "at 3x data/memory).  Use `--cap balloon` (the machine's memory taken "
                "away instead, reclaimed by the kernel's global reclaim), or raise --mem.")
    if report.get("timed_out"):
        return "the program exceeded its time limit and was killed"
    if report.get("signal"):
        return f"the program was killed by {report['signal']}"
    return None


def _fmt(value, kind: str) -> str:
    if value is None:
        return "n/a"
    if kind == "s":
        return f"{value:.3f} s"
    if kind == "b":
        return format_size(value)
    return f"{value:,.0f}" if isinstance(value, (int, float)) else str(value)


def print_report(report: dict) -> None:
    from rich.table import Table

    title = " ".join(report["command"])
    if len(title) > 60:
        title = title[:57] + "..."
    t = Table(title=f"foresight run: {title}", title_justify="left")
    t.add_column("measure")
    t.add_column("value", justify="right")
    if report["repeat"] > 1:
        t.add_column(f"min … max ({report['repeat']} runs)", justify="right")
    for key, label, kind in FIELDS:
        row = [label, _fmt(report.get(key), kind)]
        if report["repeat"] > 1:
            s = report["spread"].get(key)
            row.append(f"{_fmt(s['min'], kind)} … {_fmt(s['max'], kind)}" if s else "")
        t.add_row(*row)
    rt = report.get("runtime")
    if rt:
        g = rt["global"]
        t.add_row("hints issued / filtered", f"{g['issued']:,} / {g['filtered']:,}")
    env = report["environment"]
    out = console(stderr=True)
    out.print(t)
    out.print(
        f"cap: {format_size(report['mem_limit_bytes']) if report['mem_limit_bytes'] else 'none'}"
        f" ({report['cgroup'] or 'uncapped'}); read_ahead_kb {env['read_ahead_kb']}; "
        f"page-cluster {env['page_cluster']}; swap {format_size(env['swap']['total_bytes'])}; "
        f"THP {env['transparent_hugepage']}; kernel {env['kernel']}"
        + environment.settings_text(env), highlight=False)
    why = explain_failure(report)
    if why:
        out.print(f"[bold red]foresight run:[/] {why}")
    warm = max((r.get("cold_cached_pages") or 0 for r in report["runs"]), default=0)
    if warm:
        print(f"foresight run: warning: a cold run started with {warm:,} pages of its data "
              "files still in the page cache (dropping the cache left them): it measured "
              "the cache for those", file=sys.stderr)
    for line in leftover_lines(report):
        print(f"foresight run: {line}", file=sys.stderr)


def leftover_lines(report: dict) -> list[str]:
    """One line per run that left processes in its cgroup, and per cgroup left behind."""
    lines = []
    for r in report["runs"]:
        procs = r.get("leftover_processes") or []
        if procs:
            named = ", ".join(f"{p['pid']} ({p['command']})" for p in procs)
            what = "1 process" if len(procs) == 1 else f"{len(procs)} processes"
            lines.append(f"the program left {what} running after it exited: {named}; "
                         "killed, as a measurement ends with its program")
        if r.get("cgroup_not_removed"):
            lines.append(f"warning: {r['cgroup_not_removed']}")
    return lines


def prepare(json_path: str | None = None, plots_dir: str | None = None) -> None:
    """What `foresight run` and `foresight bench` do first: put back a readahead setting
    a killed run left behind, and refuse output destinations that cannot be written
    (before a long run rather than after it)."""
    check_writable(json_path)
    check_writable(plots_dir, directory=True)
    for line in readahead.recover():
        print(f"foresight: {line}", file=sys.stderr)


def main(ns) -> int:
    cmd = list(ns.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("no program given: foresight run [options] -- PROG ARGS")
    if ns.repeat < 1:
        raise UsageError(f"--repeat must be at least 1, not {ns.repeat}")
    for f in ns.files:
        if not os.path.exists(f):
            raise UsageError(f"--file {f}: no such file")
    mem = parse_size(ns.mem) if ns.mem is not None else None
    if mem is not None:
        check_mem(mem)
    elif ns.cap != "cgroup":
        raise UsageError(f"--cap {ns.cap} needs --mem SIZE (the memory to leave the program)")
    prepare(ns.json)
    report = measure(cmd, mem=mem, cold=ns.cold, files=ns.files,
                     readahead_kb=ns.readahead_kb, repeat=ns.repeat, cap=ns.cap)
    print_report(report)
    if ns.json is not None:
        write_json(ns.json, report)
    sys.stdout.flush()
    if report["exit_code"] == 0 and any(r["cap_lost"] for r in report["runs"]):
        return 1
    return report["exit_code"]
