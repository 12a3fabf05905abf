"""`foresight bench compile`: the generated many-nest files, the per-run measurement
(peak RSS of the whole process tree, timeouts), and end to end at a small size that
the table and JSON report the numbers measured — sizes checked against our own
compiles and `--emit-c`, ratios against the medians.  No timing assertions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foresight.bench import compile as suite
from foresight.bench import gen_nests
from foresight.bench.compiler import KERNELS, kernels_dir
from foresight.bench.nas import KERNELS as NAS_KERNELS
from foresight.driver.outputs import under_directory
from foresight.errors import UsageError

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
LINES = 40


def bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([FORESIGHT, "bench", "compile", *args], capture_output=True,
                          text=True, timeout=600, env=env)


def test_generator_is_deterministic_and_sized(cc, tmp_path):
    text, nests = gen_nests.generate(1044, 1)
    assert (text.count("\n"), nests) == (1044, 280)      # the reliability issue's file
    assert gen_nests.generate(1044, 1) == (text, nests)
    assert gen_nests.generate(1044, 2)[0] != text
    for n in (10, 11, 40, 250, 1000, 2033):
        t, k = gen_nests.generate(n, 1)
        assert n <= t.count("\n") < n + 8
        assert t.count("for (int j") + t.count("for (int i") == 2 * k
    with pytest.raises(ValueError):
        gen_nests.generate(9, 1)
    src = tmp_path / "n.c"
    src.write_text(gen_nests.generate(250, 1)[0])
    r = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-c", str(src), "-o",
                        str(tmp_path / "n.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "foresight.bench.gen_nests", "--lines", "250"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == src.read_text()


def test_peak_rss_counts_the_whole_process_tree(tmp_path):
    # 200 MiB touched by a grandchild: wait4's ru_maxrss of the child covers it; a small
    # run right after shows its own peak, not the largest so far.  Measured from a fresh
    # interpreter: a forked child's ru_maxrss starts at its parent's size (pytest's
    # grows with the tests before this one).
    big = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
           "'b = bytearray(200 << 20)'], check=True)")
    script = (
        "import json, os, sys\n"
        "from pathlib import Path\n"
        "from foresight.bench.compile import measure\n"
        "log = Path(sys.argv[1])\n"
        f"r = measure([sys.executable, '-c', {big!r}], dict(os.environ), log, 60)\n"
        "small = measure([sys.executable, '-c', 'pass'], dict(os.environ), log, 60)\n"
        "print(json.dumps([r, small]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "log")],
                         capture_output=True, text=True, check=True)
    r, small = json.loads(out.stdout)
    assert r["max_rss_bytes"] >= 200 << 20
    assert small["max_rss_bytes"] < 100 << 20
    assert small["wall_seconds"] > 0 and small["cpu_seconds"] >= 0


def test_timeout_stops_the_whole_group(tmp_path):
    pidfile = tmp_path / "pid"
    with pytest.raises(suite.Failed, match="timed out after 0.5 s"):
        suite.measure(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"],
                      dict(os.environ), tmp_path / "log", 0.5)
    grandchild = int(pidfile.read_text())
    for _ in range(50):   # killed with its group; reaped by init
        if not Path(f"/proc/{grandchild}").exists():
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{grandchild}").exists()


def test_failing_command_names_itself(tmp_path):
    with pytest.raises(suite.Failed, match=r"exit 3: sh -c 'echo oops >&2; exit 3'\noops"):
        suite.measure(["sh", "-c", "echo oops >&2; exit 3"], dict(os.environ),
                      tmp_path / "log", 60)


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, Path]:
    tmp = tmp_path_factory.mktemp("bench-compile")
    out = tmp / "c.json"
    (tmp / "t").mkdir()
    r = bench("--lines", str(LINES), "--kernels", "gather", "--repeat", "2",
              "--front-end-lines", "20,80",
              "--json", str(out), "--plots", str(tmp / "plots"),
              env={**os.environ, "TMPDIR": str(tmp / "t")})
    assert r.returncode == 0, r.stdout + r.stderr
    return r, json.loads(out.read_text()), tmp


def _text_size(obj: Path) -> int:
    r = subprocess.run(["size", str(obj)], capture_output=True, text=True, check=True)
    head, values = r.stdout.splitlines()[:2]
    return int(values.split()[head.split().index("text")])


def test_table_json_and_plot(result):
    r, res, tmp = result
    assert "Traceback" not in r.stderr
    for text in ("foresight bench compile", "nests-40", "kernels/gather", "P front end",
                 "P's cc", "CPUs, load average"):
        assert text in r.stdout
    assert res["suite"] == "compile" and res["repeat"] == 2 and res["lines"] == [LINES]
    assert res["compiler_version"] and res["runtime_cflags"]
    env = res["environment"]
    assert env["cpus"] and len(env["load_average_start"]) == 3
    assert [row["input"] for row in res["rows"]] == [f"nests-{LINES}", "kernels/gather"]
    for row in res["rows"]:
        assert "problem" not in row
        for v in suite.VARIANTS:
            assert len(row[v]["runs"]) == 2
            assert row[v]["wall_seconds"] > 0 and row[v]["max_rss_bytes"] > 0
        for v in ("O", "P", "underlying"):
            assert row[v]["object_text_bytes"] > 0
        assert row["underlying_matches"] and row["warnings"] == []
        assert set(row["ratios"]) == {"generated_over_source", "time", "memory",
                                      "object_text"}
    assert (tmp / "plots" / "compile-ratios.png").stat().st_size > 0
    # the front end alone on generated files of two sizes: the JSON's per-1,000-lines
    # figures are the medians of its runs over the files' own line counts
    assert res["front_end_lines"] == [20, 80]
    assert "the front end alone" in r.stdout and "per 1,000 lines" in r.stdout
    scaling = res["front_end_scaling"]
    assert [s["lines"] for s in scaling] == [gen_nests.generate(n, 1)[0].count("\n")
                                             for n in (20, 80)]
    for s in scaling:
        assert "problem" not in s and len(s["runs"]) == 2
        walls = sorted(x["wall_seconds"] for x in s["runs"])
        assert s["wall_seconds"] == pytest.approx(sum(walls) / 2)
        assert s["per_1000_lines"] == pytest.approx(s["wall_seconds"] * 1000 / s["lines"])
    assert res["front_end_target_per_1000_lines"] == 0.3
    assert (tmp / "plots" / "compile-front-end.png").stat().st_size > 0


def test_numbers_are_the_ones_measured(result, cc, tmp_path):
    """Sizes against our own compiles of the same sources; ratios against the medians
    the JSON reports; the runs' medians against the runs."""
    _, res, _ = result
    # The generated file again, at the path the suite compiled it from (under the
    # fixture's TMPDIR): the text names its source (`#line 1 "PATH"`), and so does the
    # object's read-only data.
    gen = Path(res["rows"][0]["source"])
    assert not gen.exists()   # the suite removed its temporary files
    gen.parent.mkdir(parents=True)
    gen.write_text(gen_nests.generate(LINES, 1)[0])
    sources = {f"nests-{LINES}": gen, "kernels/gather": kernels_dir() / "gather.c"}
    for row in res["rows"]:
        src = sources[row["input"]]
        assert row["source_bytes"] == src.stat().st_size
        assert row["source_lines"] == src.read_text().count("\n")
        emit = tmp_path / "emit" / row["input"].replace("/", "-")
        subprocess.run([FORESIGHT, "cc", "-O2", "-c", "--emit-c", str(emit), str(src), "-o",
                        str(tmp_path / "p.o")], check=True)
        assert row["generated_bytes"] == under_directory(emit, str(src)).stat().st_size
        assert row["generated_bytes"] > row["source_bytes"]     # hints were placed
        assert row["P"]["object_text_bytes"] == _text_size(tmp_path / "p.o")
        subprocess.run([cc, "-O2", "-c", str(src), "-o", str(tmp_path / "o.o")], check=True)
        assert row["O"]["object_text_bytes"] == _text_size(tmp_path / "o.o")
        assert row["O"]["object_bytes"] == (tmp_path / "o.o").stat().st_size
        o, p, q = row["O"], row["P"], row["ratios"]
        assert q["time"] == pytest.approx(p["wall_seconds"] / o["wall_seconds"])
        assert q["memory"] == pytest.approx(p["max_rss_bytes"] / o["max_rss_bytes"])
        assert q["object_text"] == pytest.approx(p["object_text_bytes"]
                                                 / o["object_text_bytes"])
        assert q["generated_over_source"] == pytest.approx(row["generated_bytes"]
                                                           / row["source_bytes"])
        walls = sorted(x["wall_seconds"] for x in p["runs"])
        assert p["wall_seconds"] == pytest.approx(sum(walls) / 2)
        assert row["front_end_share"] == pytest.approx(row["front_end"]["wall_seconds"]
                                                       / p["wall_seconds"])
    row = res["rows"][0]
    assert row["nests"] == gen_nests.generate(LINES, 1)[1]
    assert row["made_by"] == f"python -m foresight.bench.gen_nests --lines {LINES} --seed 1"


def test_a_failing_compile_is_reported_per_input(tmp_path):
    out = tmp_path / "c.json"
    r = bench("--lines", "20", "--kernels", "none", "--front-end-lines", "none",
              "--json", str(out),
              env={**os.environ, "FORESIGHT_CC": "false"})
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "nests-20: exit 1: false -O2 -c" in r.stdout
    row = json.loads(out.read_text())["rows"][0]
    assert row["problem"].startswith("exit 1: false -O2 -c") and "O" not in row


def test_a_failing_front_end_run_is_reported_and_fails_the_suite(tmp_path):
    out = tmp_path / "c.json"
    r = bench("--lines", "none", "--kernels", "none", "--front-end-lines", "20",
              "--timeout", "0.05", "--repeat", "1", "--json", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "front end, 21 lines: timed out after 0.05 s" in r.stdout
    [row] = json.loads(out.read_text())["front_end_scaling"]
    assert row["problem"].startswith("timed out") and row["nests"] > 0
    assert "per_1000_lines" not in row


def test_inputs_by_name_each_once():
    assert suite.parse_lines("250, 1_000,250,") == [250, 1000]
    assert suite.parse_lines("none") == []
    assert suite.parse_programs("cg,nas/cg,kernels/gather") == ["cg", "gather"]
    assert suite.parse_programs("none") == []
    # Every NAS kernel and every kernel of bench compiler.
    assert len(suite.parse_programs(None)) == len(NAS_KERNELS) + len(KERNELS) == 22
    with pytest.raises(UsageError, match="unknown program 'kernels/cg'"):
        suite.parse_programs("kernels/cg")


@pytest.mark.parametrize("args, message", [
    (["--lines", "5"], "a generated file has at least 10 lines, not 5"),
    (["--lines", "ten"], "'ten' is not a number of lines"),
    (["--kernels", "nope"], "unknown program 'nope'"),
    (["--lines", "none", "--kernels", "none", "--front-end-lines", "none"],
     "nothing to measure"),
    (["--front-end-lines", "9"], "--front-end-lines '9': a generated file has at least"),
    (["--front-end-lines", " , "], "--front-end-lines ' , ': no line counts"),
    (["--timeout", "0"], "--timeout: must be a positive number, not 0"),
])
def test_option_errors(args, message, tmp_path):
    out = tmp_path / "c.json"
    r = bench(*args, "--json", str(out))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("foresight: error:"), r.stderr
    assert message in lines[0]
    assert not out.exists()
