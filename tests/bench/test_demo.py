"""`make demo` (`foresight bench demo`): the demo's unmodified programs print the same
output built with and without hints, in core and under a memory cap; a difference is
caught; `--report` ends with one summary line per file; README describes the table the
demo prints."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from foresight.bench import demo
from foresight.cli import main
from foresight.compiler.report import file_summaries, format_report
from foresight.errors import BenchError
from foresight.harness.environment import swap_summary

ROOT = Path(__file__).resolve().parents[2]
SMALL = 6 << 20


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[dict, str]:
    """Every demo program as O and P (with P's JSON report), and mkdata."""
    tmp = tmp_path_factory.mktemp("demo")
    progs = {n: demo.build(n, tmp, demo.programs_dir() / f"{n}.c", p.flags)
             for n, p in demo.PROGRAMS.items()}
    return progs, demo.build_mkdata(tmp)


def test_programs_are_plain_c_without_foresight(cc, tmp_path):
    # "Unmodified": no runtime calls, no pragmas, and clean under -Wall -Wextra -Werror.
    for name, prog in demo.PROGRAMS.items():
        src = demo.programs_dir() / f"{name}.c"
        text = src.read_text()
        assert not re.search(r"foresight[_.]|#\s*pragma|_Pragma", text), name
        r = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", str(src),
                            "-o", str(tmp_path / name), *prog.flags], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr


def test_same_output_with_and_without_hints(built, disk_tmp):
    progs, mkdata = built
    for name, (exes, report) in progs.items():
        assert any(e.get("hints") for e in report), f"{name}: foresight cc placed no hints"
        args, _ = demo.arguments(name, SMALL, mkdata, disk_tmp)
        out = {v: subprocess.run([exes[v], *args], capture_output=True, text=True)
               for v in ("O", "P")}
        assert out["O"].returncode == 0, out["O"].stderr
        assert out["O"].stdout.count("\n") == 2
        assert out["P"].stdout == out["O"].stdout, name
        assert out["P"].returncode == 0


def test_inputs_are_made_once_and_whole(built, disk_tmp):
    _, mkdata = built
    args, files = demo.arguments("spmv", SMALL, mkdata, disk_tmp)
    assert [Path(f).exists() for f in files] == [True, True]
    assert sum(Path(f).stat().st_size for f in files) == SMALL
    assert [Path(f).stat().st_size for f in files] == demo.input_sizes("matrix", SMALL)
    _, frames = demo.arguments("scan", SMALL, mkdata, disk_tmp)
    assert [Path(f).stat().st_size for f in frames] == demo.input_sizes("frames", SMALL)
    assert not list(disk_tmp.glob("*.tmp"))
    before = [Path(f).stat().st_mtime_ns for f in files]
    assert demo.arguments("spmv", SMALL, mkdata, disk_tmp) == (args, files)
    assert [Path(f).stat().st_mtime_ns for f in files] == before
    # A failed write leaves neither the file nor its temporary behind.
    with pytest.raises(BenchError, match="cannot create"):
        demo.arguments("scan", 0, mkdata, disk_tmp / "missing")
    assert not (disk_tmp / "missing").exists()


def test_a_difference_in_output_fails_the_demo():
    same = {"stdout": "sum 1.0\n"}
    assert demo.compare("x", [("O", same), ("P", dict(same))]) == "sum 1.0\n"
    with pytest.raises(BenchError, match="outputs differ"):
        demo.compare("x", [("O", same), ("P (in core)", {"stdout": "sum 1.5\n"})])


def test_demo_end_to_end_on_mapped_files(root, disk_tmp, monkeypatch, capsys):
    # The file-mapped programs out of core (3x an 8 MiB cap) and in core, as `make demo`
    # runs them, with the table and the two closing lines.
    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(disk_tmp))
    out_json = disk_tmp / "demo.json"
    assert main(["bench", "demo", "--kernels", "spmv,scan", "--mem", "8M",
                 "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    res = json.loads(out_json.read_text())
    assert res["data_bytes"] == 24 << 20 and res["ratio"] == 3
    assert [r["program"] for r in res["rows"]] == ["spmv", "scan"]
    for row in res["rows"]:
        assert row["outputs_identical"] and row["O"]["checksum"] == row["P"]["checksum"]
        assert row["O"]["wall_seconds"] > 0 and row["P_in_core"]["wall_seconds"] > 0
        assert row["O"]["read_bytes"] > 0
    assert "identical" in text and "in core O → P" in text
    assert 'make CC="' in text and "foresight run --mem" in text


def test_temporary_swap_is_removed_even_on_error(root, no_swap, disk_tmp, monkeypatch):
    # heat's malloc'd rows need swap beyond the cap: as root the demo makes a swap file
    # for its runs and turns it off and removes it afterwards, also when a run fails.
    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(disk_tmp))
    path = demo.demo_swap()
    with pytest.raises(BenchError, match="a run failed"), \
            demo.enough_swap(64 << 20) as note:
        assert str(path) in note and "256.0 MiB" in note
        assert [a["path"] for a in swap_summary()["areas"]] == [str(path)]
        raise BenchError("a run failed")
    assert not swap_summary()["areas"] and not path.exists()
    with demo.enough_swap(0) as note:   # nothing malloc'd beyond the cap: nothing made
        assert note == "swap 0 B active"
    assert not path.exists()


def test_without_root_and_swap_heat_is_skipped(monkeypatch):
    monkeypatch.setattr(demo.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(demo.environment, "swap_free_bytes", lambda: 0)
    with demo.enough_swap(384 << 20) as note:
        assert note is None


def test_unknown_program_is_a_clear_error(capsys):
    assert main(["bench", "demo", "--kernels", "heat,nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "foresight: error: unknown demo program 'nope' (choose from heat, spmv, scan)"


def test_report_ends_with_a_summary_per_file(built):
    progs, _ = built
    heat = progs["heat"][1]
    text = format_report(heat).splitlines()
    assert re.fullmatch(r".*heat\.c: summary: 6 loop nests, 5 hinted, 1 left alone "
                        r"\(1 not analysed: a while or do loop\)", text[-1])
    both = format_report(heat + progs["spmv"][1]).splitlines()
    assert [ln.split(": summary: ")[1] for ln in both[-2:]] == [
        "6 loop nests, 5 hinted, 1 left alone (1 not analysed: a while or do loop)",
        "2 loop nests, 2 hinted, 0 left alone"]
    excerpt = demo.report_excerpt(heat)
    assert any("loop nest in step()" in ln for ln in excerpt)
    assert any("left unchanged: a while or do loop" in ln for ln in excerpt)
    assert "... and 4 more nests with hints" in "\n".join(excerpt)


def test_summary_counts_reasons_without_names_or_lines():
    def nest(**kw) -> dict:
        return {"source": "big.c", "file": "big.c", "line": 1, "function": "f",
                "loops": [], "skipped": None, **kw}

    entries = [
        nest(hints=[{"ref": "a[i]"}], references=[{}], prefetch=True),
        nest(skipped="the index i is changed in the body (line 12)"),
        nest(skipped="the index k is changed in the body (line 40)"),
        nest(skipped="a while or do loop: only counted for-loops are analysed; the loops "
             "inside it are looked at on their own"),
        nest(hints=[], references=[], decisions=[]),
        nest(hints=[], references=[{}], decisions=[
            "x[i]: the whole nest touches 800 bytes of it, less than a 65536-byte block: "
            "not pipelined (left to demand paging)"]),
        nest(hints=[], references=[{}], decisions=[
            "p->q[i]: not prefetched: its base p->q is read from memory and the "
            "reference is conditional"]),
    ]
    assert file_summaries(entries) == [
        "big.c: summary: 7 loop nests, 1 hinted, 6 left alone (2 not analysed: the index "
        "is changed in the body, 1 data too small to need hints, 1 no array references, "
        "1 no hint could be proved safe, 1 not analysed: a while or do loop)"]
    off = [dict(e, prefetch=False) for e in entries[:1]]
    assert file_summaries(off) == ["big.c: summary: 1 loop nest, 1 would be hinted "
                                   "(--no-prefetch: none inserted), 0 left alone"]


def test_readme_describes_what_the_demo_prints():
    readme = (ROOT / "README.md").read_text()
    for col in ("O time", "P time", "speedup O/P", "I/O stall O → P", "read O → P",
                "outputs", "in core O → P"):
        assert col in readme, col
    for name in demo.PROGRAMS:
        assert f"`{name}`" in readme, name
    assert "foresight bench micro" in readme
    assert 'make CC="$PWD/.venv/bin/foresight cc"' in readme


def _no_build(*_args, **_kw):
    raise AssertionError("the demo went on to build its programs")


@pytest.mark.parametrize("args", [
    ["--ratio", "nan"], ["--ratio", "inf"], ["--kernels", ","], ["--readahead-kb", "-5"],
    ["--mem", "1M"], ["--plots", "PLOTS"]])
def test_bad_arguments_are_refused_before_anything_is_built(args, tmp_path, monkeypatch,
                                                            capsys):
    monkeypatch.setattr(demo, "build", _no_build)
    args = [str(tmp_path / "plots") if a == "PLOTS" else a for a in args]
    assert main(["bench", "demo", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("foresight: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "plots").exists()


def test_too_little_disk_is_refused_before_anything_is_written(disk_tmp, monkeypatch, capsys):
    # 30 TiB of inputs (and a swap file for heat) do not fit: the demo says so up front
    # instead of writing until the disk is full.
    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(disk_tmp))
    monkeypatch.setattr(demo, "build", _no_build)
    assert main(["bench", "demo", "--mem", "10T"]) == 2
    err = capsys.readouterr().err
    assert "the demo needs" in err and "free" in err and "--mem or --ratio" in err, err
    assert sorted(p.name for p in disk_tmp.iterdir()) == ["demo.lock"]


def test_an_input_of_the_wrong_size_is_left_alone(built, disk_tmp):
    # A file with the demo's input name but not the size mkdata writes is not the demo's:
    # it is neither used (the program would fail or read garbage) nor overwritten.
    _, mkdata = built
    stale = disk_tmp / f"demo-frames-{SMALL}.dat"
    stale.write_bytes(b"not frames" * 100)
    with pytest.raises(BenchError, match=r"is 1,000 bytes, not the .* left alone"):
        demo.arguments("scan", SMALL, mkdata, disk_tmp)
    assert stale.read_bytes() == b"not frames" * 100
    assert sorted(p.name for p in disk_tmp.iterdir()) == [stale.name]


def test_a_file_at_a_temporary_name_is_left_alone(built, disk_tmp):
    # Inputs are written under temporary names the demo creates itself, never over a file
    # that happens to be there.
    _, mkdata = built
    mine = disk_tmp / f"demo-frames-{SMALL}.dat.tmp"
    mine.write_text("my notes\n")
    _, files = demo.arguments("scan", SMALL, mkdata, disk_tmp)
    assert mine.read_text() == "my notes\n"
    assert sorted(p.name for p in disk_tmp.iterdir()) == sorted([mine.name,
                                                                 Path(files[0]).name])


def test_a_file_at_the_swap_path_is_left_alone(root, disk_tmp, monkeypatch):
    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(disk_tmp))
    monkeypatch.setattr(demo.environment, "swap_free_bytes", lambda: 0)
    path = demo.demo_swap()
    path.write_text("my notes\n")
    with pytest.raises(BenchError, match="never overwrites it: move it away or set "
                       "FORESIGHT_BENCH_DIR"), demo.enough_swap(64 << 20):
        pass
    assert path.read_text() == "my notes\n"
    assert str(path) not in [a["path"] for a in swap_summary()["areas"]]


def test_one_demo_at_a_time(disk_tmp, monkeypatch, capsys):
    # A second demo on the same data directory would share (and remove) the first's swap
    # file and write the same inputs: it stops before doing anything.
    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(disk_tmp))
    monkeypatch.setattr(demo, "build", _no_build)
    with demo.one_at_a_time(disk_tmp):
        assert main(["bench", "demo", "--kernels", "scan", "--mem", "8M"]) == 2
    err = capsys.readouterr().err
    assert "another foresight bench demo is running" in err, err


def test_a_program_killed_by_ctrl_c_interrupts_the_demo():
    # Ctrl-C (or a SIGTERM the harness forwards) ends the program: that is the demo being
    # interrupted, not the program failing.
    kill = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    with pytest.raises(KeyboardInterrupt):
        demo.run(sys.executable, ["-c", kill], [], None, cold=False)
    with pytest.raises(BenchError, match="exit 3"):
        demo.run(sys.executable, ["-c", "raise SystemExit(3)"], [], None, cold=False)


@pytest.mark.parametrize("args", [["3", str(1 << 61), "1"], ["10", "10", "1x"],
                                  ["3", "3", "99999999999"], ["3", "abc", "1"]])
def test_heat_refuses_sizes_it_cannot_hold(built, args):
    # Sizes that overflow malloc's argument or are not numbers: a message, not a crash
    # or a silently different run; the same with and without hints.
    progs, _ = built
    for v in ("O", "P"):
        r = subprocess.run([progs["heat"][0][v], *args], capture_output=True, text=True)
        assert r.returncode == 2, (v, r)
        assert r.stderr.startswith("heat: ROWS and COLS must be whole numbers"), r.stderr


def test_a_bench_dir_that_is_a_file_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(tmp_path / "file"))
    (tmp_path / "file").write_text("mine\n")
    assert main(["bench", "demo", "--kernels", "scan", "--mem", "8M"]) == 2
    err = capsys.readouterr().err
    assert err == (f"foresight: error: cannot use {tmp_path / 'file'} for the benchmark data "
                   "(FORESIGHT_BENCH_DIR): File exists\n")
    assert (tmp_path / "file").read_text() == "mine\n"


def test_make_demo_does_not_print_every_directory_make_enters():
    # `make demo` runs `make setup` first: cmake's own make, run from make, printed
    # "gmake[N]: Entering directory" / "Leaving directory" around every target, 50 lines
    # before the demo's first.
    r = subprocess.run(["make", "runtime"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "Entering directory" not in r.stdout + r.stderr


def test_a_swap_file_a_killed_demo_left_is_removed_or_made_large_enough(root, no_swap, disk_tmp,
                                                                        monkeypatch):
    # A SIGKILLed demo leaves its swap file active.  The next demo removes it when it needs
    # no swap (it said "--size 0 B is too small"), and makes it anew when it is smaller
    # than the data need (it ran with too little swap, and said it had enough).
    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(disk_tmp))
    path = demo.demo_swap()
    try:
        demo.swap.enable(path, 256 << 20)
        with demo.enough_swap(0) as note:
            assert note == "swap 0 B active"
            assert not swap_summary()["areas"] and not path.exists()
        demo.swap.enable(path, 256 << 20)
        with demo.enough_swap(200 << 20) as note:
            assert "a temporary 512.0 MiB swap file" in note
            assert [a["path"] for a in swap_summary()["areas"]] == [str(path)]
            assert path.stat().st_size == 512 << 20
        assert not swap_summary()["areas"] and not path.exists()
    finally:
        if path.exists():
            demo.swap.disable(path)


def test_without_root_the_demo_stops_before_building(monkeypatch, capsys):
    # Setting read_ahead_kb needs root: without it the demo failed after building, with
    # "cannot keep the readahead journal".
    monkeypatch.setattr(demo.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(demo, "build", _no_build)
    assert main(["bench", "demo", "--kernels", "scan", "--mem", "8M"]) == 2
    assert "bench demo needs root" in capsys.readouterr().err


def test_an_interrupted_json_write_leaves_nothing(tmp_path, monkeypatch):
    from foresight import reports

    def interrupted(*_a, **_kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(reports.json, "dump", interrupted)
    with pytest.raises(KeyboardInterrupt):
        reports.write_json(str(tmp_path / "demo.json"), {"rows": []})
    assert list(tmp_path.iterdir()) == []


def test_a_sigterm_while_writing_the_json_leaves_nothing(tmp_path, monkeypatch):
    from foresight import reports

    def terminated(*_a, **_kw):
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(demo, "demo", lambda *_a: {"rows": []})
    monkeypatch.setattr(demo, "print_table", lambda _res: None)
    monkeypatch.setattr(reports.json, "dump", terminated)
    previous = signal.signal(signal.SIGTERM, lambda *_a: None)   # not this test's end
    try:
        assert main(["bench", "demo", "--json", str(tmp_path / "demo.json")]) == 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert list(tmp_path.iterdir()) == []


def test_a_program_named_twice_runs_once(monkeypatch):
    seen = []
    monkeypatch.setattr(demo, "demo", lambda mem, ratio, kb, names, repeat:
                        seen.append(names) or {"rows": []})
    monkeypatch.setattr(demo, "print_table", lambda _res: None)
    assert main(["bench", "demo", "--kernels", "scan,heat,scan"]) == 0
    assert seen == [["scan", "heat"]]
