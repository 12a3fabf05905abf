"""The runtime's FORESIGHT_TRACE event trace and FORESIGHT_FILTER=0 (issue 4, Figure 12).

A small C program (tests/system/trace/trace_prog.c) built against the installed runtime maps a
file and touches, prefetches or holds it; the trace it leaves is parsed here with the
format of runtime/include/foresight.h."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foresight.harness import cgroup
from foresight.harness.run import run_once

HERE = Path(__file__).parent
PAGE = 4096


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    """trace_prog built with cc and `foresight config --cflags --libs`."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    flags = subprocess.run([sys.executable, "-m", "foresight.cli", "config", "--cflags",
                            "--libs"], capture_output=True, text=True, check=True).stdout.split()
    out = tmp_path_factory.mktemp("trace") / "trace_prog"
    subprocess.run([compiler, "-O2", "-Wall", "-Werror", "-o", str(out),
                    str(HERE / "trace" / "trace_prog.c"), *flags], check=True)
    return out


def capped():
    if cgroup.find_memory_hierarchy() is None:
        pytest.skip("no memory cgroup on this machine")


def data_file(d: Path, mib: int) -> Path:
    path = d / f"data{mib}"
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
        f.flush()
        os.fsync(f.fileno())  # clean pages, so the program can drop them from the cache
    return path


def env(**kw) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("FORESIGHT_")}
    e.update(kw)
    return e


def parse(path: Path) -> dict:
    """The trace as lists of tuples, checking the format on the way."""
    lines = path.read_text().splitlines()
    t = {"header": lines[0], "comments": [], "F": [], "P": [], "R": [], "L": []}
    for line in lines[1:]:
        f = line.split()
        if f[0] == "#":
            t["comments"].append(line)
        elif f[0] == "F":      # address, end, wait (from the fault's start; 0: unseen)
            assert len(f) == 4 and f[1].startswith("0x") and 0 <= int(f[3]) <= int(f[2])
            t["F"].append((int(f[1], 16), int(f[2])))
        elif f[0] == "P":      # address, pages, resident before, time, site line
            assert len(f) == 6 and f[1].startswith("0x") and int(f[5]) >= 0
            t["P"].append((int(f[1], 16), int(f[2]), int(f[3]), int(f[4])))
        elif f[0] == "R":      # address, pages, time, site line, mode
            assert len(f) == 6 and f[1].startswith("0x") and f[5] in ("cold", "pageout")
            t["R"].append((int(f[1], 16), int(f[2]), int(f[3])))
        else:
            assert f[0] == "L" and len(f) == 2, line
            t["L"].append(int(f[1]))
    assert lines[-1].startswith("L "), "the L line comes last"
    assert len(t["L"]) == 1
    return t


def mapping(stdout: str) -> tuple[int, int]:
    """(address, bytes) of the program's mapping, from its first line."""
    _, addr, size = stdout.splitlines()[0].split()
    return int(addr, 16), int(size)


def faults_available(t: dict) -> bool:
    return not any(c.startswith("# faults unavailable:") for c in t["comments"])


def test_faults_of_a_mapped_file_are_traced_under_a_cap(prog, disk_tmp, tmp_path):
    capped()
    data = data_file(disk_tmp, 64)
    trace = tmp_path / "touch.trace"
    t0 = time.monotonic_ns()
    r = run_once([str(prog), "touch", str(data)], mem=16 << 20, cold=True, files=[str(data)],
                 env=env(FORESIGHT_TRACE=str(trace)), capture=True)
    t1 = time.monotonic_ns()
    assert r["exit_code"] == 0, r["stderr"]
    assert not Path(f"{trace}.tmp").exists()
    t = parse(trace)
    assert t["header"].startswith(f"# foresight trace 1 page={PAGE} pid=")
    assert faults_available(t), t["comments"]
    lo, size = mapping(r["stdout"])
    pages = size // PAGE
    inside = [(a, ts) for a, ts in t["F"] if lo <= a < lo + size]
    assert all(a % PAGE == 0 and t0 <= ts <= t1 for a, ts in t["F"])
    # Read twice with a 16 MiB cap and no readahead: each of the 16384 pages faults twice.
    distinct = {a for a, _ in inside}
    assert len(distinct) >= 0.95 * pages
    assert len(inside) + t["L"][0] >= 1.8 * pages
    # Only the program's own faults: about what the kernel counted for the process (an F
    # line can also be a minor fault that blocked, hence the small allowance).
    assert len(t["F"]) <= r["major_faults"] + 16
    assert not t["P"] and not t["R"]


def test_a_program_built_without_hints_records_faults(prog, disk_tmp, tmp_path):
    """The O variant: `foresight cc --no-prefetch` still links libforesight, whose
    constructor starts counting faults at program start."""
    capped()
    plain = tmp_path / "plain"
    subprocess.run([sys.executable, "-m", "foresight.cli", "cc", "--no-prefetch", "-O2",
                    "-o", str(plain), str(HERE / "trace" / "trace_prog.c")], check=True)
    data = data_file(disk_tmp, 8)
    trace = tmp_path / "plain.trace"
    r = run_once([str(plain), "exit", str(data)], mem=16 << 20, cold=True, files=[str(data)],
                 env=env(FORESIGHT_TRACE=str(trace)), capture=True)
    assert r["exit_code"] == 3, r["stderr"]  # left through exit(), not main's return
    t = parse(trace)
    assert faults_available(t), t["comments"]
    lo, size = mapping(r["stdout"])
    assert len({a for a, _ in t["F"] if lo <= a < lo + size}) >= 0.95 * size // PAGE


def test_prefetches_are_traced(prog, disk_tmp, tmp_path):
    data = data_file(disk_tmp, 8)
    trace = tmp_path / "prefetch.trace"
    r = subprocess.run([str(prog), "prefetch", str(data)], capture_output=True, text=True,
                       env=env(FORESIGHT_TRACE=str(trace)), timeout=60)
    assert r.returncode == 0, r.stderr
    assert "resident 1.00" in r.stdout
    t = parse(trace)
    lo, size = mapping(r.stdout)
    covered = set()
    for addr, n, before, _ in t["P"]:
        assert lo <= addr and addr + n * PAGE <= lo + size and 0 <= before <= n
        covered.update(range(addr, addr + n * PAGE, PAGE))
    assert covered == set(range(lo, lo + size, PAGE))
    # Cold pages: the kernel was asked for pages that were not already there.
    assert sum(before for _, _, before, _ in t["P"]) < size // PAGE


def test_a_fault_on_a_page_still_being_read_follows_its_prefetch(prog, disk_tmp, tmp_path):
    """Reading the file right after prefetching it overtakes the reads: those faults wait
    for a read already in flight (since Linux 6.4 the kernel accounts them as minor) and
    must appear as F lines after the P line covering the page."""
    data = data_file(disk_tmp, 32)
    trace = tmp_path / "race.trace"
    r = subprocess.run([str(prog), "race", str(data)], capture_output=True, text=True,
                       env=env(FORESIGHT_TRACE=str(trace)), timeout=60)
    assert r.returncode == 0, r.stderr
    t = parse(trace)
    if not faults_available(t):
        pytest.skip("perf_event_open unavailable: " + t["comments"][0])
    first_p = {}
    for addr, n, _, ts in t["P"]:
        for page in range(addr, addr + n * PAGE, PAGE):
            first_p.setdefault(page, ts)
    lo, size = mapping(r.stdout)
    assert set(first_p) == set(range(lo, lo + size, PAGE))
    late = [a for a, ts in t["F"] if a in first_p and ts > first_p[a]]
    assert late, "no fault waited for a prefetch in flight"


def resident_run(prog, data, tmp_path, name, **extra):
    trace, stats = tmp_path / f"{name}.trace", tmp_path / f"{name}.json"
    r = subprocess.run([str(prog), "resident", str(data), "50"], capture_output=True,
                       text=True, timeout=60,
                       env=env(FORESIGHT_TRACE=str(trace), FORESIGHT_STATS=str(stats), **extra))
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("range "))
    _, addr, size = line.split()
    return parse(trace), json.loads(stats.read_text()), int(addr, 16), int(size), r


def test_filter_off_issues_prefetches_of_resident_pages(prog, disk_tmp, tmp_path):
    data = data_file(disk_tmp, 8)
    # Default: after the first call, the 16 resident pages are filtered (inline bit test).
    t, s, _, _, _ = resident_run(prog, data, tmp_path, "on")
    g = s["global"]
    assert s["config"]["filter"] is True
    assert g["considered"] == 50 and g["filtered"] >= 49 and g["issued"] == 0
    assert not t["P"]
    # FORESIGHT_FILTER=0: every call goes to the kernel, which finds the pages resident.
    t, s, addr, size, _ = resident_run(prog, data, tmp_path, "off", FORESIGHT_FILTER="0")
    g = s["global"]
    assert s["config"]["filter"] is False
    assert g["considered"] == 50 and g["filtered"] == 0
    assert g["issued"] >= 25 and g["issued"] + g["coalesced"] == 50
    assert g["pages_issued"] == g["pages_unnecessary"] == g["issued"] * size // PAGE
    assert len(t["P"]) == g["issued"]
    assert all(p[:3] == (addr, size // PAGE, size // PAGE) for p in t["P"])


def test_bad_filter_value_gives_one_message_and_the_default(prog, disk_tmp, tmp_path):
    data = data_file(disk_tmp, 8)
    t, s, _, _, r = resident_run(prog, data, tmp_path, "bad", FORESIGHT_FILTER="off")
    assert r.stderr.count("FORESIGHT_FILTER=off") == 1 and r.stderr.count("\n") == 1
    assert s["config"]["filter"] is True and s["global"]["filtered"] >= 49


def test_killed_program_leaves_only_the_tmp_file(prog, disk_tmp, tmp_path):
    data = data_file(disk_tmp, 8)
    trace = tmp_path / "killed.trace"
    p = subprocess.Popen([str(prog), "hang", str(data)], stdout=subprocess.PIPE, text=True,
                         env=env(FORESIGHT_TRACE=str(trace)))
    try:
        while "ready" not in p.stdout.readline():
            pass
        time.sleep(0.3)  # the drain thread writes at least every 100 ms
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stdout.close()
    assert not trace.exists()
    tmp = Path(f"{trace}.tmp")
    assert tmp.exists()
    # Written as it goes: the header is there, the L line of a finished trace is not.
    text = tmp.read_text()
    assert text.startswith(f"# foresight trace 1 page={PAGE} pid={p.pid}\n")
    assert "\nL " not in text


def test_unwritable_trace_path_warns_once_and_changes_nothing(prog, disk_tmp, tmp_path):
    data = data_file(disk_tmp, 8)
    plain = subprocess.run([str(prog), "touch", str(data)], capture_output=True, text=True,
                           env=env(), timeout=60)
    bad = tmp_path / "no" / "such" / "dir" / "t"
    traced = subprocess.run([str(prog), "touch", str(data)], capture_output=True, text=True,
                            env=env(FORESIGHT_TRACE=str(bad)), timeout=60)
    assert traced.returncode == plain.returncode == 0
    # Same output except the mapping's address (ASLR).
    assert traced.stdout.splitlines()[1:] == plain.stdout.splitlines()[1:]
    assert plain.stderr == ""
    assert traced.stderr.count("\n") == 1
    assert "FORESIGHT_TRACE" in traced.stderr and "not tracing" in traced.stderr
    assert not bad.parent.exists()
