"""`foresight cachesim` (paper 4's multiprocessor cache simulator) against a small
pure-Python reference model written from the rules in cachesim/include/foresight_cachesim.h:
per CPU a set-associative LRU cache of physical lines under page coloring, MESI, and every
miss named cold, capacity, conflict (a fully associative LRU shadow of as many lines still
holds it), true or false sharing (Dubois: a word accessed was written since the
invalidation).  Seeded random traces, binary and text, over geometries from direct mapped
to fully associative and 1 to 4 CPUs, must give exactly the model's counts; the same
inputs give byte-identical JSON up to the timing fields; bad input is one line naming the
problem and exit status 2."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from foresight import paths

FORESIGHT = [sys.executable, "-m", "foresight.cli"]
MAGIC = b"FSCTRC1\n"
READ, WRITE, BARRIER = 0, 1, 2
CLASSES = ("cold", "capacity", "conflict", "true_sharing", "false_sharing")


@pytest.fixture(scope="module", autouse=True)
def simulator():
    if not os.access(paths.libexec_dir() / "foresight-cachesim", os.X_OK):
        pytest.fail("foresight-cachesim missing: run `make setup`")


def cachesim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*FORESIGHT, "cachesim", *args], capture_output=True, text=True)


# ---- the reference model ----

@dataclass
class Line:
    holders: set[int] = field(default_factory=set)
    ever: set[int] = field(default_factory=set)
    lost: dict[int, int] = field(default_factory=dict)  # cpu -> invalidating write
    excl: int | None = None  # the CPU holding it Exclusive or Modified
    dirty: bool = False
    recorded: bool = False   # a write has invalidated a copy: its words' history is kept


class Model:
    def __init__(self, cpus: int, l2: int, assoc: int, line: int, page: int,
                 l1: tuple[int, int] | None = None):
        self.cpus, self.line, self.page, self.assoc = cpus, line, page, assoc
        # the L1 (bytes, ways): virtually indexed, the L2's line, inclusive
        self.l1_sets, self.l1_assoc = (l1[0] // line // l1[1], l1[1]) if l1 else (0, 0)
        self.l1 = [[OrderedDict() for _ in range(self.l1_sets)] for _ in range(cpus)]
        self.vpage_of: dict[int, int] = {}   # frame -> virtual page
        self.nlines = l2 // line
        self.sets = self.nlines // assoc
        self.ncolors = max(1, l2 // assoc // page)
        self.lpp = page // line
        self.cache = [[OrderedDict() for _ in range(self.sets)] for _ in range(cpus)]
        self.shadow = [OrderedDict() for _ in range(cpus)]
        self.frame: dict[int, int] = {}
        self.per_color = [0] * self.ncolors
        self.dir: dict[int, Line] = {}
        self.written: dict[tuple[int, int], int] = {}  # (physical line, word) -> write
        self.writes = 0
        self.barriers = 0
        self.st = [dict.fromkeys(("accesses", "reads", "writes", "line_refs", "l1_hits", "hits",
                                  *CLASSES, "writebacks", "upgrades", "invalidations"), 0)
                   for _ in range(cpus)]

    def physical_line(self, vline: int) -> int:
        vpage, in_page = divmod(vline, self.lpp)
        if vpage not in self.frame:   # pc: color = vpage mod ncolors, frames in order
            color = vpage % self.ncolors
            self.frame[vpage] = color + self.ncolors * self.per_color[color]
            self.vpage_of[self.frame[vpage]] = vpage
            self.per_color[color] += 1
        return self.frame[vpage] * self.lpp + in_page

    def access(self, cpu: int, addr: int, size: int, write: bool) -> None:
        st = self.st[cpu]
        st["accesses"] += 1
        st["writes" if write else "reads"] += 1
        end = addr + size - 1
        for vline in range(addr // self.line, end // self.line + 1):
            lo = max(addr, vline * self.line) % self.line // 8
            hi = min(end, vline * self.line + self.line - 1) % self.line // 8
            self.reference(cpu, vline, range(lo, hi + 1), write)

    def reference(self, cpu: int, vline: int, words: range, write: bool) -> None:
        st = self.st[cpu]
        pl = self.physical_line(vline)
        cache = self.cache[cpu][pl % self.sets]
        st["line_refs"] += 1
        l1 = self.l1[cpu][vline % self.l1_sets] if self.l1_sets else None
        in_l1 = l1 is not None and pl in l1
        if in_l1:
            l1.move_to_end(pl)
            d = self.dir[pl]
            if not write or (d.excl == cpu and d.dirty and not d.recorded):
                st["l1_hits"] += 1
                return
        shadow = self.shadow[cpu]
        in_shadow = pl in shadow
        shadow[pl] = None
        shadow.move_to_end(pl)
        if len(shadow) > self.nlines:
            shadow.popitem(last=False)
        d = self.dir.setdefault(pl, Line())
        if pl in cache:
            st["hits"] += 1
            cache.move_to_end(pl)
            if l1 is not None and not in_l1:
                self.l1_put(l1, pl)
            if write:
                if d.excl != cpu:
                    st["upgrades"] += 1
                self.write(cpu, pl, d, words)
            return
        if cpu not in d.ever:
            st["cold"] += 1
            d.ever.add(cpu)
        elif cpu in d.lost:
            since = d.lost.pop(cpu)
            true = any(self.written.get((pl, w), 0) >= since for w in words)
            st["true_sharing" if true else "false_sharing"] += 1
        else:
            st["conflict" if in_shadow else "capacity"] += 1
        if write:
            self.write(cpu, pl, d, words)
        else:
            if d.holders - {cpu}:
                if d.excl is not None and d.dirty:
                    self.st[d.excl]["writebacks"] += 1
                d.excl, d.dirty = None, False
            else:
                d.excl, d.dirty = cpu, False
            d.holders.add(cpu)
        if len(cache) == self.assoc:
            victim, _ = cache.popitem(last=False)
            v = self.dir[victim]
            v.holders.discard(cpu)
            if v.excl == cpu:
                if v.dirty:
                    st["writebacks"] += 1
                v.excl, v.dirty = None, False
            if l1 is not None:
                self.l1_drop(cpu, victim)
        cache[pl] = None
        if l1 is not None:
            self.l1_put(l1, pl)

    def l1_put(self, l1: OrderedDict, pl: int) -> None:
        if len(l1) == self.l1_assoc:
            l1.popitem(last=False)
        l1[pl] = None

    def l1_drop(self, cpu: int, pl: int) -> None:
        """Physical line PL leaves CPU's L1 (inclusion), found by its virtual line."""
        frame, in_page = divmod(pl, self.lpp)
        vline = self.vpage_of[frame] * self.lpp + in_page
        self.l1[cpu][vline % self.l1_sets].pop(pl, None)

    def write(self, cpu: int, pl: int, d: Line, words: range) -> None:
        self.writes += 1
        for other in d.holders - {cpu}:
            del self.cache[other][pl % self.sets][pl]
            if self.l1_sets:
                self.l1_drop(other, pl)
            d.lost[other] = self.writes
            d.recorded = True
            self.st[cpu]["invalidations"] += 1
        d.holders, d.excl, d.dirty = {cpu}, cpu, True
        for w in words:
            self.written[(pl, w)] = self.writes

    def expected(self) -> dict:
        """The model's counts in the JSON's shape."""
        def shaped(s: dict) -> dict:
            out = {k: s[k] for k in ("accesses", "reads", "writes", "line_refs", "hits",
                                     "writebacks", "upgrades", "invalidations")}
            if self.l1_sets:
                out["l1_hits"] = s["l1_hits"]
            out["misses"] = {k: s[k] for k in CLASSES}
            out["misses"]["total"] = sum(s[k] for k in CLASSES)
            out["bus_bytes"] = (out["misses"]["total"] + s["writebacks"]) * self.line
            return out
        per_cpu = [shaped(s) for s in self.st]
        total = shaped({k: sum(s[k] for s in self.st) for k in self.st[0]})
        return {**total, "per_cpu": per_cpu, "pages_per_color": self.per_color,
                "pages_mapped": len(self.frame), "barriers": self.barriers}


def measured(result: dict) -> dict:
    """The same keys from the simulator's JSON."""
    keys = ("accesses", "reads", "writes", "line_refs", "hits", "misses", "writebacks",
            "upgrades", "invalidations", "bus_bytes")
    if "l1_hits" in result:
        keys += ("l1_hits",)
    out = {k: result[k] for k in keys}
    out["per_cpu"] = [{k: c[k] for k in keys} for c in result["per_cpu"]]
    for k in ("pages_per_color", "pages_mapped", "barriers"):
        out[k] = result[k]
    return out


# ---- traces ----

def random_trace(seed: int, cpus: int, l2: int, line: int, n: int = 6000):
    """Accesses shaped to give every miss class: each CPU sweeps its own partition, twice
    the cache (capacity, conflict), shares a small hot region with all (true and false
    sharing), and now and then strays anywhere; unaligned sizes cross lines."""
    rng = random.Random(seed)
    region = 2 * l2 * cpus
    part = region // cpus
    hot = max(4 * line, 256)
    pos = [c * part for c in range(cpus)]
    out = []
    for _ in range(n):
        if rng.random() < 0.01:
            out.append((0, BARRIER, 0, 0))
            continue
        cpu = rng.randrange(cpus)
        r = rng.random()
        if r < 0.5:
            pos[cpu] = (pos[cpu] + rng.choice((8, 16, line, line, 2 * line))) % region
            addr = 0x100000 + pos[cpu]
        elif r < 0.8:
            addr = 0x800000 + rng.randrange(hot)
        else:
            addr = 0x100000 + rng.randrange(region)
        size = rng.choice((8, 8, 8, 4, 1, 16, 24, 100)) if rng.random() < 0.3 else 8
        out.append((cpu, WRITE if rng.random() < 0.35 else READ, addr, size))
    return out


def write_binary(path: Path, trace) -> Path:
    with path.open("wb") as f:
        f.write(MAGIC)
        for cpu, op, addr, size in trace:
            f.write(struct.pack("<QIHBB", addr, size, cpu, op, 0))
    return path


def write_text(path: Path, trace) -> Path:
    lines = ["# a random trace\n"]
    for i, (cpu, op, addr, size) in enumerate(trace):
        if op == BARRIER:
            lines.append("B\n")
        elif size == 8 and i % 2:
            lines.append(f"{cpu} {'RW'[op]} {addr:#x}\n")
        else:
            lines.append(f"{cpu} {'rw'[op] if i % 3 else 'RW'[op]} {addr} {size}  # n\n\n")
    path.write_text("".join(lines))
    return path


def replay(model: Model, trace) -> dict:
    for cpu, op, addr, size in trace:
        if op == BARRIER:
            model.barriers += 1
        else:
            model.access(cpu, addr, size, op == WRITE)
    return model.expected()


# (L2 bytes, ways, line, page): direct mapped, 2 and 4 ways, 16 ways (the indexed sets),
# fully associative (one color) and 64 of 128 ways over 4 KiB pages
GEOMETRIES = [
    (4096, 1, 64, 1024),
    (8192, 2, 32, 512),
    (4096, 4, 128, 256),
    (16384, 16, 64, 1024),
    (2048, 32, 64, 512),
    (32768, 64, 32, 4096),
]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: "{}-{}w-{}-{}".format(*g))
@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_counts_equal_the_model(tmp_path, geometry, cpus):
    l2, assoc, line, page = geometry
    seed = l2 + 7 * assoc + line + cpus
    trace = random_trace(seed, cpus, l2, line)
    expect = replay(Model(cpus, l2, assoc, line, page), trace)
    for fmt, writer in (("bin", write_binary), ("txt", write_text)):
        path = writer(tmp_path / f"t.{fmt}", trace)
        out = tmp_path / f"{fmt}.json"
        p = cachesim("--cpus", str(cpus), "--l2", f"{l2},{assoc},{line}", "--page", str(page),
                     "--trace", str(path), "--json", str(out))
        assert p.returncode == 0, p.stderr
        result = json.loads(out.read_text())
        assert measured(result) == expect, fmt
        assert result["config"]["ncolors"] == len(expect["pages_per_color"])
    # the test is not vacuous: with two CPUs every class shows up; a fully associative
    # cache is its own shadow, so it has no conflict misses
    if assoc == l2 // line:
        assert expect["misses"]["conflict"] == 0
    elif cpus == 2:
        assert all(expect["misses"][k] > 0 for k in CLASSES), expect["misses"]


# (L2 geometry, L1 bytes and ways): an L1 of one set, of a page's worth of sets, and a
# direct-mapped one of more sets than a page holds lines (virtual and physical indexes
# then differ)
L1_CASES = [
    ((4096, 1, 64, 1024), (256, 4)),
    ((8192, 2, 32, 512), (1024, 2)),
    ((16384, 16, 64, 1024), (4096, 1)),
]


@pytest.mark.parametrize("case", L1_CASES, ids=lambda c: "{}-{}w-l1-{}-{}w".format(
    c[0][0], c[0][1], *c[1]))
@pytest.mark.parametrize("cpus", [1, 3])
def test_counts_with_an_l1_equal_the_model(tmp_path, case, cpus):
    (l2, assoc, line, page), (l1, l1_assoc) = case
    trace = random_trace(l2 + l1 + cpus, cpus, l2, line)
    expect = replay(Model(cpus, l2, assoc, line, page, (l1, l1_assoc)), trace)
    path = write_binary(tmp_path / "t.bin", trace)
    out = tmp_path / "o.json"
    p = cachesim("--cpus", str(cpus), "--l2", f"{l2},{assoc},{line}", "--page", str(page),
                 "--l1", f"{l1},{l1_assoc}", "--trace", str(path), "--json", str(out))
    assert p.returncode == 0, p.stderr
    result = json.loads(out.read_text())
    assert measured(result) == expect
    assert result["config"]["l1_bytes"] == l1
    # the L1 takes references off the L2, and the L2 still sees misses of every kind
    assert 0 < expect["l1_hits"] < expect["line_refs"]
    assert expect["line_refs"] == expect["l1_hits"] + expect["hits"] + expect["misses"]["total"]


def twice(tmp_path, *args: str) -> str:
    """The JSON of two runs with ARGS, which must be the same up to the timing fields."""
    texts = []
    for i in range(2):
        out = tmp_path / f"{i}.json"
        p = cachesim(*args, "--json", str(out))
        assert p.returncode == 0, p.stderr
        texts.append(out.read_text())
    head = [t[:t.index('  "seconds"')] for t in texts]
    assert head[0] == head[1]
    return texts[0]


def test_time_is_deterministic_and_adds_up(tmp_path):
    trace = write_binary(tmp_path / "t.bin", random_trace(3, 4, 1 << 16, 128, n=20000))
    r = json.loads(twice(tmp_path, "--cpus", "4", "--preset", "sgi", "--time", "--mem-ns",
                         "400", "--trace", str(trace)))
    c = r["config"]
    assert (c["mhz"], c["l2_cycles"], c["mem_ns"], c["remote_ns"], c["bus_mbs"]) == \
        (400, 10, 400, 750, 1200)
    assert (c["l1_bytes"], c["l1_assoc"]) == (32768, 2)
    # every CPU's time is its own (busy and stalls) plus its idle time: the same phases
    for cpu in r["per_cpu"]:
        own = cpu["busy_ns"] + cpu["stall_ns"]["total"] + cpu["idle_ns"]
        assert abs(own - r["time_ns"]) <= 1e-6 * r["time_ns"] + 1
        assert abs(cpu["busy_ns"] - cpu["accesses"] * 2.5) < 1e-3
    assert r["bus_busy_ns"] == pytest.approx((r["bus_bytes"] + 8 * r["upgrades"]) / 1.2)
    assert 0 < r["bus_utilization"] <= 1
    # the untimed run's JSON has none of it
    out = tmp_path / "u.json"
    assert cachesim("--cpus", "4", "--preset", "sgi", "--trace", str(trace),
                    "--json", str(out)).returncode == 0
    u = json.loads(out.read_text())
    assert "time_ns" not in u and "l1_hits" not in u and "mhz" not in u["config"]


def test_same_inputs_same_json(tmp_path):
    trace = write_binary(tmp_path / "t.bin", random_trace(5, 4, 1 << 20, 128, n=20000))
    tail = json.loads(twice(tmp_path, "--cpus", "4", "--preset", "sgi", "--policy", "random",
                            "--seed", "9", "--trace", str(trace)))
    assert list(tail)[-2:] == ["seconds", "accesses_per_second"]
    assert tail["accesses"] == tail["reads"] + tail["writes"] == 20000 - tail["barriers"]


def test_presets_and_overrides(tmp_path):
    trace = write_text(tmp_path / "t.txt", [(0, READ, 0, 8)])
    out = tmp_path / "o.json"
    for args, want in ((["--preset", "sgi"], (1 << 20, 1, 128, 4096, 256)),
                       (["--preset", "alpha8400"], (4 << 20, 1, 64, 8192, 512)),
                       (["--preset", "sgi", "--l2", "2M,2,64"], (2 << 20, 2, 64, 4096, 256)),
                       (["--preset", "alpha8400", "--page", "16K"], (4 << 20, 1, 64, 16384, 256)),
                       (["--l2", "64K,full,64", "--page", "4K"], (65536, 1024, 64, 4096, 1))):
        p = cachesim("--cpus", "1", *args, "--trace", str(trace), "--json", str(out))
        assert p.returncode == 0, p.stderr
        c = json.loads(out.read_text())["config"]
        assert (c["l2_bytes"], c["assoc"], c["line"], c["page"], c["ncolors"]) == want


COLOR_MAP = """\
foresight-color-map 1
# two arrays of 64 pages each, used together, split evenly over 4 threads (and a third
# the trace never touches)
page 4096
array 0x1000000 262144
array 0x2000000 262144
array 0x3000000 8192
ref 0x1000000 4096 0 64 0 0 even 4 1 0
ref 0x2000000 4096 0 64 0 0 blocked 4 1 0 w
ref 0x3000000 8 0 1024 0 16 cyclic-reverse 4 2 0
group 0x1000000 0x2000000
run 4096 64 0
"""


def test_cdpc_plans_hints_from_the_color_map(tmp_path):
    cmap = tmp_path / "prog.map"
    cmap.write_text(COLOR_MAP)
    # each CPU sweeps its quarter of both arrays, 128 KiB of the SGI's 1 MiB cache
    trace = []
    for _ in range(3):
        for i in range(0, 65536, 128):
            for cpu in range(4):
                trace.append((cpu, READ, 0x1000000 + cpu * 65536 + i, 8))
                trace.append((cpu, WRITE, 0x2000000 + cpu * 65536 + i, 8))
    path = write_binary(tmp_path / "t.bin", trace)
    results = {}
    for policy in ("pc", "cdpc", "cdpc-bh"):
        out = tmp_path / f"{policy}.json"
        p = cachesim("--cpus", "4", "--preset", "sgi", "--policy", policy, "--map", str(cmap),
                     "--trace", str(path), "--json", str(out))
        assert p.returncode == 0, p.stderr
        results[policy] = json.loads(out.read_text())
    assert results["cdpc"]["config"]["hint_runs"] > 0
    assert results["cdpc"]["config"]["skipped_summaries"] == 0
    # both arrays start on color 0 under pc: every CPU's two quarters collide, line by
    # line; the plan lays each CPU's pages out on distinct colors
    assert results["pc"]["misses"]["conflict"] == 2 * 2 * 4 * 512
    for policy in ("cdpc", "cdpc-bh"):
        assert results[policy]["misses"]["conflict"] == 0
        assert results[policy]["misses"]["cold"] == results["pc"]["misses"]["cold"]
        assert results[policy]["pages_mapped"] == 128


# ---- bad input: one line, naming the problem, exit status 2, nothing written ----

def fails(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "never.json"
    p = cachesim(*args, "--json", str(out))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists()


def record(addr: int = 64, size: int = 8, cpu: int = 0, op: int = READ, zero: int = 0) -> bytes:
    return struct.pack("<QIHBB", addr, size, cpu, op, zero)


@pytest.mark.parametrize("records,message", [
    ([record(), record()[:10]], "bad.bin: record 2: truncated: 10 of 16 bytes"),
    ([record(), record(op=7)], "bad.bin: record 2: operation 7"),
    ([record(op=WRITE, zero=3)], "bad.bin: record 1: reserved byte 15 is 3"),
    ([record(), record(), record(cpu=5)], "bad.bin: record 3: CPU 5 outside 0..1 (--cpus 2)"),
    ([record(size=0)], "bad.bin: record 1: size 0"),
    ([record(addr=2**64 - 4)], "bad.bin: record 1: 8 bytes at 0xfffffffffffffffc wrap"),
])
def test_corrupt_binary_trace(tmp_path, records, message):
    path = tmp_path / "bad.bin"
    path.write_bytes(MAGIC + b"".join(records))
    fails(tmp_path, ["--cpus", "2", "--preset", "sgi", "--trace", str(path)], message)


@pytest.mark.parametrize("line,message", [
    ("0 X 100", "t.txt:3: operation 'X' is not R or W"),
    ("0 R zz", "t.txt:3: address 'zz' is not a number"),
    ("0 R 0x", "t.txt:3: address '0x' is not a number"),
    ("7 R 0", "t.txt:3: CPU 7 outside 0..1 (--cpus 2)"),
    ("0 R 0 0", "t.txt:3: size 0"),
    ("0 R", "t.txt:3: expected `CPU R|W ADDR [SIZE]` or `B`, not 2 fields"),
    ("0 R 0 8 9", "t.txt:3: extra field '9'"),
    ("B 0", "t.txt:3: extra field '0'"),
    ("x R 0", "t.txt:3: CPU 'x' is not a number"),
    ("0 W 99999999999999999999", "t.txt:3: address '99999999999999999999' is not a number"),
])
def test_bad_text_line(tmp_path, line, message):
    path = tmp_path / "t.txt"
    path.write_text(f"0 R 0\n# fine\n{line}\n1 W 8\n")
    fails(tmp_path, ["--cpus", "2", "--preset", "sgi", "--trace", str(path)], message)


@pytest.mark.parametrize("args,message", [
    (["--cpus", "2", "--l2", "1M,3,128", "--page", "4K"],
     "associativity 3 does not divide the cache's 8192 lines"),
    (["--cpus", "2", "--l2", "1000,1,128", "--page", "4K"], "L2 size 1000 is not a power of two"),
    (["--cpus", "2", "--l2", "1M,1,96", "--page", "4K"], "line size 96 is not a power of two"),
    (["--cpus", "2", "--preset", "sgi", "--page", "3K"], "page size 3072 is not a power of two"),
    (["--cpus", "2", "--preset", "sgi", "--page", "64"], "page size 64 is smaller than the line"),
    (["--cpus", "65", "--preset", "sgi"], "--cpus '65': must be 1..64"),
    (["--cpus", "0", "--preset", "sgi"], "--cpus '0': must be 1..64"),
    (["--cpus", "2", "--l2", "1M,1", "--page", "4K"], "--l2 '1M,1': expected SIZE,ASSOC,LINE"),
    (["--cpus", "2", "--l2", "1M,1,128"], "needs --l2 and --page, or --preset"),
    (["--cpus", "2", "--preset", "vax"], "unknown --preset 'vax'"),
    (["--cpus", "2", "--preset", "sgi", "--policy", "lru"], "unknown --policy 'lru'"),
    (["--cpus", "2", "--preset", "sgi", "--policy", "cdpc"], "--policy cdpc needs --map FILE"),
    (["--preset", "sgi"], "--cpus N is required"),
    (["--cpus", "2", "--preset", "sgi", "--l1", "32K"], "--l1 '32K': expected SIZE,ASSOC"),
    (["--cpus", "2", "--preset", "sgi", "--l1", "96,1"],
     "L1 size 96 is not a power of two of at least a line (128)"),
    (["--cpus", "2", "--preset", "sgi", "--l1", "32K,3"],
     "L1 associativity 3 does not divide its 256 lines"),
    (["--cpus", "2", "--preset", "sgi", "--mhz", "0"], "--mhz '0': expected a whole number "
     "from 1"),
    (["--cpus", "2", "--preset", "sgi", "--mem-ns", "-5"], "--mem-ns '-5': expected a whole "
     "number from 0"),
])
def test_bad_geometry_and_options(tmp_path, args, message):
    trace = write_text(tmp_path / "t.txt", [(0, READ, 0, 8)])
    fails(tmp_path, [*args, "--trace", str(trace)], message)


@pytest.mark.parametrize("text,message", [
    ("foresight-color-map 1\nfoo 1 2\n", "m.map:2: unknown record 'foo'"),
    ("foresight-color-map 2\n", "m.map:1: color map version 2"),
    ("array 0 4096\n", "m.map:1: not a color map"),
    ("foresight-color-map 1\narray 0x1000\n", "m.map:2: `array` takes 2 fields, not 1"),
    ("foresight-color-map 1\nref 0 8 0 4 0 0 sideways 4 0 0\n",
     "m.map:2: field 7 of `ref`, 'sideways', is not a schedule"),
    ("foresight-color-map 1\nref 0 8 0 4 0 0 even 65 0 0\n", "m.map:2: `ref` needs NTHREADS"),
    ("foresight-color-map 1\n\n# c\ngroup 0x10 zz\n", "m.map:4: field 2 of `group`, 'zz'"),
    ("foresight-color-map 1\nref 0 8 0 4 0 0 even 4 0 0 x\n",
     "m.map:2: field 11 of `ref`, 'x', is not r or w"),
    ("foresight-color-map 1\nref 0 8 0 4 0 0 even 4 0 0 w 1 2\n",
     "m.map:2: field 13 of `ref`, '2', is not 0 or 1"),
    ("foresight-color-map 1\nref 0 8 0 4 0 0 even 4 0 0 w 1 1 9\n",
     "m.map:2: `ref` takes 10 fields, not 14"),
    ("foresight-color-map 1\naccess 0 8 0 4 0 0 8 1 1 0 f\n",
     "m.map:2: `access` takes 12 fields, not 11"),
    ("foresight-color-map 1\nref 0 8 0 4 0 0 even 4 0 0 w x\n",
     "m.map:2: field 12 of `ref`, 'x', is not a call number"),
])
def test_bad_color_map(tmp_path, text, message):
    cmap = tmp_path / "m.map"
    cmap.write_text(text)
    trace = write_text(tmp_path / "t.txt", [(0, READ, 0, 8)])
    fails(tmp_path, ["--cpus", "2", "--preset", "sgi", "--policy", "cdpc", "--map", str(cmap),
                     "--trace", str(trace)], message)


def test_missing_trace_and_help(tmp_path):
    fails(tmp_path, ["--cpus", "1", "--preset", "sgi", "--trace", str(tmp_path / "nope")],
          "nope: cannot read")
    p = cachesim("--help")
    assert p.returncode == 0 and "--policy" in p.stdout
