"""`foresight sim` (paper 3's shared I/O-node cache, simulated): its harmful-prefetch
detector and its MIN replacement against brute-force references, its determinism, the
oracle, and its errors."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import pytest

FORESIGHT = [sys.executable, "-m", "foresight.cli"]


def sim(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([*FORESIGHT, "sim", *args], capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def run_json(trace: Path, out: Path, *args: str) -> dict:
    sim("--trace", str(trace), "--json", str(out), *args)
    return json.loads(out.read_text())


def write(path: Path, lines: list[tuple[int, str, int]]) -> Path:
    path.write_text("".join(f"{c} {op} {b}\n" for c, op, b in lines))
    return path


def random_lines(seed: int, n: int = 3000, clients: int = 4, blocks: int = 40):
    rng = random.Random(seed)
    return [(rng.randrange(clients), rng.choice("RRRWPP"), rng.randrange(blocks))
            for _ in range(n)]


def brute_force(lines, capacity: int) -> dict:
    """Harmful, benign and open prefetches by their definition: an LRU cache replayed in
    the lines' order, and for every eviction by a prefetch, a scan of the lines after it
    for whichever of the two blocks is referenced first."""
    cache: OrderedDict[int, None] = OrderedDict()
    evictions, missed = [], {}
    for pos, (c, op, b) in enumerate(lines):
        if op in "RW":
            missed[pos] = b not in cache
            if b in cache:
                cache.move_to_end(b)
            else:
                if len(cache) == capacity:
                    cache.popitem(last=False)
                cache[b] = None
        elif b not in cache:
            if len(cache) == capacity:
                victim, _ = cache.popitem(last=False)
                evictions.append((pos, victim, b, c))
            cache[b] = None
    out = {"harmful": 0, "benign": 0, "open": 0, "intra": 0, "inter": 0,
           "by_client": {}, "harm_miss_refs": set()}
    for pos, victim, fetched, k in evictions:
        for later in range(pos + 1, len(lines)):
            c, op, b = lines[later]
            if op not in "RW" or b not in (victim, fetched):
                continue
            if b == victim:
                out["harmful"] += 1
                out["intra" if c == k else "inter"] += 1
                out["by_client"][k] = out["by_client"].get(k, 0) + 1
                if missed[later]:
                    out["harm_miss_refs"].add(later)
            else:
                out["benign"] += 1
            break
        else:
            out["open"] += 1
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_detector_finds_what_the_definition_finds(tmp_path, seed):
    lines = random_lines(seed)
    trace = write(tmp_path / "t.trace", lines)
    got = run_json(trace, tmp_path / "o.json", "--serial", "--policy", "plain",
                   "--replacement", "lru", "--cache", "8", "--block", "1",
                   "--shadows", "100000")
    want = brute_force(lines, 8)
    assert want["harmful"] > 20 and want["benign"] > 20   # the sequence tests something
    assert got["harmful_prefetches"] == want["harmful"]
    assert got["benign_prefetches"] == want["benign"]
    assert got["open_shadows"] == want["open"]
    assert got["unresolved_prefetches"] == 0
    assert got["intra_client"] == want["intra"]
    assert got["inter_client"] == want["inter"]
    assert got["harm_misses"] == len(want["harm_miss_refs"])
    for client in got["clients"]:
        assert client["harmful_prefetches"] == want["by_client"].get(client["id"], 0)


def test_a_bounded_shadow_memory_leaves_prefetches_unresolved(tmp_path):
    lines = random_lines(4)
    trace = write(tmp_path / "t.trace", lines)
    got = run_json(trace, tmp_path / "o.json", "--serial", "--policy", "plain",
                   "--replacement", "lru", "--cache", "8", "--block", "1", "--shadows", "2")
    want = brute_force(lines, 8)
    assert got["unresolved_prefetches"] > 0
    resolved = got["harmful_prefetches"] + got["benign_prefetches"]
    assert resolved + got["unresolved_prefetches"] + got["open_shadows"] == \
        want["harmful"] + want["benign"] + want["open"]


@pytest.mark.parametrize("policy", ["none", "plain", "obl", "coarse", "fine", "optimal"])
def test_the_same_inputs_give_byte_identical_json(tmp_path, policy):
    trace = write(tmp_path / "t.trace", random_lines(5, n=5000, clients=6, blocks=300))
    args = ["--trace", str(trace), "--policy", policy, "--cache", "1M", "--epochs", "10"]
    sim(*args, "--json", str(tmp_path / "a.json"))
    sim(*args, "--json", str(tmp_path / "b.json"))
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_the_oracle_drops_exactly_the_harmful_prefetches(tmp_path):
    lines = random_lines(6)
    trace = write(tmp_path / "t.trace", lines)
    common = ["--serial", "--replacement", "lru", "--cache", "8", "--block", "1",
              "--shadows", "100000"]
    plain = run_json(trace, tmp_path / "p.json", *common, "--policy", "plain")
    best = run_json(trace, tmp_path / "o.json", *common, "--policy", "optimal")
    assert plain["harmful_prefetches"] > 0
    assert best["harmful_prefetches"] == 0
    assert best["oracle_dropped"] > 0


def belady_misses(blocks: list[int], capacity: int) -> int:
    """Belady's MIN by its definition: on a miss with the cache full, evict the cached
    block whose next reference comes last (never: last of all)."""
    cache: set[int] = set()
    misses = 0
    for pos, b in enumerate(blocks):
        if b in cache:
            continue
        misses += 1
        if len(cache) == capacity:
            later = blocks[pos + 1:]
            cache.remove(max(sorted(cache),
                             key=lambda x, later=later: later.index(x) if x in later
                             else len(later)))
        cache.add(b)
    return misses


@pytest.mark.parametrize("seed", [8, 9])
def test_min_replacement_misses_what_belady_misses(tmp_path, seed):
    lines = [(c, op, b) for c, op, b in random_lines(seed, n=2000, blocks=60) if op != "P"]
    trace = write(tmp_path / "t.trace", lines)
    common = ["--serial", "--policy", "none", "--cache", "12", "--block", "1"]
    best = run_json(trace, tmp_path / "m.json", *common, "--replacement", "min")
    lru = run_json(trace, tmp_path / "l.json", *common, "--replacement", "lru")
    want = belady_misses([b for _, _, b in lines], 12)
    assert best["replacement"] == "min"
    assert sum(c["misses"] for c in best["clients"]) == want
    assert want < sum(c["misses"] for c in lru["clients"])   # MIN beats LRU here


def test_min_behind_a_client_cache_is_belady_of_what_reaches_the_node(tmp_path):
    """Reads the client's own LRU cache serves never reach the node: MIN there must be
    Belady over the rest, the client's own order (one client: timing changes nothing)."""
    lines = [(0, op, b) for _, op, b in random_lines(10, n=3000, blocks=40) if op != "P"]
    trace = write(tmp_path / "t.trace", lines)
    own: OrderedDict[int, None] = OrderedDict()
    reach = []
    for _, op, b in lines:
        if op == "R" and b in own:
            own.move_to_end(b)
            continue
        reach.append(b)
        own[b] = None
        own.move_to_end(b)
        if len(own) > 8:
            own.popitem(last=False)
    got = run_json(trace, tmp_path / "m.json", "--policy", "none", "--replacement", "min",
                   "--cache", "12", "--block", "1", "--client-cache", "8")
    assert got["clients"][0]["client_cache_hits"] == len(lines) - len(reach) > 100
    assert got["clients"][0]["misses"] == belady_misses(reach, 12)


def test_without_prefetches_every_policy_serves_the_same(tmp_path):
    lines = [(c, op, b) for c, op, b in random_lines(7, n=4000) if op != "P"]
    trace = write(tmp_path / "t.trace", lines)
    keys = ("hits", "misses", "finish_s", "stall_s")
    seen = []
    for policy in ("none", "plain", "coarse", "fine", "optimal"):
        got = run_json(trace, tmp_path / f"{policy}.json", "--policy", policy,
                       "--cache", "512K", "--epochs", "20")
        seen.append(([{k: c[k] for k in keys} for c in got["clients"]], got["makespan_s"]))
    assert all(s == seen[0] for s in seen)


def test_none_ignores_the_prefetch_lines(tmp_path):
    trace = write(tmp_path / "t.trace", [(0, "P", 5), (0, "R", 5)])
    none = run_json(trace, tmp_path / "n.json", "--policy", "none")
    plain = run_json(trace, tmp_path / "p.json", "--policy", "plain")
    assert none["clients"][0]["prefetches_issued"] == 0
    assert none["clients"][0]["misses"] == 1
    assert plain["clients"][0]["prefetches_issued"] == 1
    assert plain["clients"][0]["hits"] == 1


def test_a_barrier_waits_for_every_client_of_its_trace(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("0 R 1 1000\n0 B 0\n0 R 2\n1 R 3\n1 B 0\n1 R 4\n")
    got = run_json(trace, tmp_path / "o.json", "--policy", "none")
    by_id = {c["id"]: c for c in got["clients"]}
    # client 1 thinks nothing, yet leaves the barrier only after client 0's 1 ms
    assert by_id[1]["finish_s"] > 0.001
    alone = tmp_path / "alone.trace"
    alone.write_text("1 R 3\n1 B 0\n1 R 4\n")
    assert run_json(alone, tmp_path / "a.json", "--policy", "none")["makespan_s"] < 0.001


@pytest.mark.parametrize("text,reason", [
    ("0 R 1\n0 X 2\n", "t.trace:2: OP must be R, W, P or B: 'X'"),
    ("0 R\n", "t.trace:1: expected CLIENT OP BLOCK [THINK_US]"),
    ("-1 R 1\n", "t.trace:1: CLIENT must be a non-negative integer: '-1'"),
    ("0 R 1 2 3\n", "t.trace:1: too many fields"),
    ("# fine\n\n0 R x\n", "t.trace:3: BLOCK must be a non-negative integer: 'x'"),
    ("0 R 1 -5\n", "t.trace:1: THINK_US must be a non-negative number of microseconds"),
    ("256 R 1\n", "t.trace:1: too many clients"),
    ("# nothing\n", "t.trace: no requests"),
    ("0 \0 1\n", "t.trace:1: OP must be R, W, P or B"),
    ("0 R 1 1\0\n", "t.trace:1: THINK_US must be"),
    ("".join("0 R 1 900000000000\n" for _ in range(20000)),
     "think times add up to too long"),
])
def test_a_bad_trace_is_named_by_file_and_line_and_nothing_is_written(tmp_path, text, reason):
    trace = tmp_path / "t.trace"
    trace.write_text(text)
    out = tmp_path / "o.json"
    p = sim("--trace", str(trace), "--json", str(out), check=False)
    assert p.returncode == 2
    assert reason in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert p.stdout == ""
    assert list(tmp_path.iterdir()) == [trace]


@pytest.mark.parametrize("args,message", [
    (["--policy", "lfu"], "unknown policy 'lfu' (valid: none, plain, obl, coarse, fine, optimal)"),
    (["--threshold", "0"], "--threshold takes a number in (0, 1]"),
    (["--threshold", "1.5"], "--threshold takes a number in (0, 1]"),
    (["--k", "0"], "--k takes an integer from 1 to 1000000"),
    (["--block", "3000"], "--block takes a power of two"),
    (["--cache", "32K"], "--cache is less than one block per I/O node"),
    (["--replacement", "fifo"], "unknown replacement 'fifo' (valid: lru, lru-aging, min)"),
    (["--disk", "ssd"], "unknown disk model 'ssd' (valid: vm, paper)"),
    (["--metric", "x"], "unknown metric 'x' (valid: ratio, share)"),
    (["--policy", "obl", "--disk", "x"], "unknown disk model 'x'"),
    (["--block", "2G"], "--block takes a power of two up to 1G"),
    (["--cache", "4T", "--block", "512"], "--cache is 2^31 blocks or more"),
    (["--disk-delay", "0ms"], "--disk-delay takes Nus or Nms"),
    (["--disk-delay", "2s"], "--disk-delay takes Nus or Nms"),
    (["--disk-delay", "10001ms"], "--disk-delay takes Nus or Nms"),
])
def test_a_bad_parameter_is_one_line_naming_the_valid_values(tmp_path, args, message):
    trace = write(tmp_path / "t.trace", [(0, "R", 1)])
    p = sim("--trace", str(trace), *args, check=False)
    assert p.returncode == 2
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert p.stdout == ""


def test_a_disk_delay_serves_one_request_per_delay(tmp_path):
    # One client reading ten blocks, two of them one after the other: with a delay the
    # disk takes exactly that per read, sequential or not (the node's iocache-disk-delay).
    trace = write(tmp_path / "t.trace", [(0, "R", b) for b in (5, 1, 2, 9, 30, 7, 3, 8, 4, 6)])
    vm = run_json(trace, tmp_path / "vm.json")
    slow = run_json(trace, tmp_path / "d.json", "--disk-delay", "2ms")
    assert slow["nodes"][0]["disk_busy_s"] == pytest.approx(0.020)
    assert slow["makespan_s"] > 0.020 > vm["makespan_s"]


def test_a_missing_trace_is_an_error(tmp_path):
    p = sim("--trace", str(tmp_path / "nope.trace"), check=False)
    assert p.returncode == 2 and "nope.trace: cannot read" in p.stderr


def test_a_client_cache_serves_its_own_rereads_and_keeps_their_hints(tmp_path):
    trace = write(tmp_path / "t.trace", [(0, "R", 7), (0, "P", 7), (0, "R", 7)])
    got = run_json(trace, tmp_path / "o.json", "--policy", "plain", "--client-cache", "1M")
    c = got["clients"][0]
    assert c["demand_requests"] == 2 and c["client_cache_hits"] == 1
    assert c["hints_kept_local"] == 1 and c["prefetches_requested"] == 0
    assert got["nodes"][0]["misses"] == 1 and got["nodes"][0]["hits"] == 0


def test_the_epoch_log_has_each_epochs_harm_by_pair(tmp_path):
    lines = random_lines(8)
    trace = write(tmp_path / "t.trace", lines)
    log = tmp_path / "e.jsonl"
    got = run_json(trace, tmp_path / "o.json", "--serial", "--policy", "plain",
                   "--replacement", "lru", "--cache", "8", "--block", "1",
                   "--shadows", "100000", "--epochs", "7", "--epoch-log", str(log))
    epochs = [json.loads(x) for x in log.read_text().splitlines()]
    assert [e["epoch"] for e in epochs] == list(range(len(epochs))) and len(epochs) <= 7
    assert sum(e["harmful"] for e in epochs) == got["harmful_prefetches"]
    for e in epochs:
        assert sum(n for _, _, n in e["harm"]) == e["harmful"]
        assert sum(n for _, _, n in e["miss"]) == e["harm_misses"]


def test_an_output_that_is_no_regular_file_is_written_in_place(tmp_path):
    # renaming a temporary file over /dev/null once made it a regular file; a FIFO
    # stands in for it here
    import os
    import stat
    import threading

    trace = write(tmp_path / "t.trace", [(0, "R", 1)])
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    p = sim("--trace", str(trace), "--json", str(fifo), check=False)
    reader.join(timeout=10)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert json.loads(got[0])["requests"] == 1
    bad = sim("--trace", str(trace), "--epoch-log", str(fifo), check=False)
    assert bad.returncode == 2 and "not a regular file" in bad.stderr
