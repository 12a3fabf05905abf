"""`foresight bench`: one subcommand per suite of the registry, each with only its own
options and the common ones that apply; `--markdown` writes the tables with the command,
the commit and the conditions at the top.  No timed runs: the one suite run here is
`bench compile` on one tiny generated file, and nothing is asserted about its times."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import foresight.bench
from foresight.bench import tables
from foresight.bench.registry import SUITES
from foresight.bench.suite import Suite
from foresight.bench.tables import Table
from foresight.cli import build_parser, main

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
ROOT = Path(__file__).resolve().parents[2]


def suite_parsers() -> dict[str, argparse.ArgumentParser]:
    """`foresight bench`'s subcommands, as cli.py builds them."""
    root = build_parser()
    bench = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    bench = bench.choices["bench"]
    action = next(a for a in bench._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for a in parser._actions for o in a.option_strings} - {"-h", "--help"}


def test_every_suite_of_the_registry_is_a_subcommand_and_nothing_else():
    parsers = suite_parsers()
    assert list(parsers) == [s.name for s in SUITES]
    assert len({s.name for s in SUITES}) == len(SUITES)
    for s in SUITES:
        assert isinstance(s, Suite)
        ns = parsers[s.name].parse_args([])
        assert ns.func == s.run     # the subcommand runs this suite
        assert s.help and s.description


def test_every_suite_module_is_in_the_registry():
    # A module holding a SUITE that the registry leaves out would have no subcommand.
    registered = {type(s).__module__ for s in SUITES}
    for info in pkgutil.iter_modules(foresight.bench.__path__):
        module = importlib.import_module(f"foresight.bench.{info.name}")
        if isinstance(getattr(module, "SUITE", None), Suite):
            assert module.__name__ in registered, module.__name__


# What each suite accepts (the common options included): a suite's option moving to
# another suite, or a common one appearing where it does not apply, fails here.
OPTIONS = {
    "demo": {"--mem", "--ratio", "--readahead-kb", "--kernels", "--repeat", "--json",
             "--markdown"},
    "micro": {"--mem", "--ratio", "--readahead-kb", "--patterns", "--backings", "--repeat",
              "--json", "--markdown", "--plots"},
    "overhead": {"--repeat", "--json", "--markdown"},
    "compiler": {"--mem", "--ratio", "--readahead-kb", "--kernels", "--repeat", "--json",
                 "--markdown", "--plots"},
    "nas": {"--size", "--mem", "--ratio", "--readahead-kb", "--kernels", "--backing",
            "--sweep", "--timeout", "--repeat", "--json", "--markdown", "--plots"},
    "incore": {"--programs", "--mb", "--kernel-mb", "--near", "--repeat", "--json",
               "--markdown", "--plots"},
    "compile": {"--lines", "--kernels", "--front-end-lines", "--timeout", "--repeat", "--json",
                "--markdown", "--plots"},
    "sharedcache": {"--workloads", "--clients", "--data", "--cache", "--client-cache", "--disk",
                    "--compute", "--figs", "--live", "--live-repeat", "--quick", "--json",
                    "--markdown", "--plots"},
    "simspeed": {"--requests", "--repeat", "--json", "--markdown"},
    "aasfp": {"--quick", "--configs", "--timeout", "--repeat", "--json", "--markdown",
              "--plots"},
    "coloring": {"--programs", "--machines", "--policies", "--cpus", "--steps", "--timed",
                 "--traced",
                 "--json", "--markdown", "--plots"},
}


def test_each_suite_has_only_its_own_options():
    parsers = suite_parsers()
    assert set(parsers) == set(OPTIONS)
    for name, parser in parsers.items():
        assert options(parser) == OPTIONS[name], name


@pytest.mark.parametrize("args, message", [
    (["nas", "--lines", "250"], "unrecognized arguments: --lines 250 (see `foresight bench "
     "nas --help`)"),
    (["overhead", "--mem", "1G"], "unrecognized arguments: --mem 1G"),
    (["demo", "--patterns", "forward"], "unrecognized arguments: --patterns forward"),
    (["compile", "--ratio", "2"], "unrecognized arguments: --ratio 2"),
    (["micro", "--repeat", "0"], "argument --repeat: must be at least 1, not 0"),
    (["micro", "--ratio", "-1"], "argument --ratio: must be a positive number, not -1"),
    (["compiler", "--ratio", "2,x"], "argument --ratio: 'x' is not a number"),
    (["nas", "--ratio", "2,0"], "argument --ratio: must be a positive number, not 0"),
    (["nas", "--size", "huge"], "argument --size: invalid choice: 'huge'"),
    (["nope"], "argument SUITE: invalid choice: 'nope'"),
    ([], "the following arguments are required: SUITE"),
])
def test_an_option_of_another_suite_is_a_one_line_error(args, message, capsys):
    assert main(["bench", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("foresight: error: ") and err.count("\n") == 1, err
    assert message in err, err


def test_help_lists_the_suites_and_a_suite_only_its_options():
    r = subprocess.run([FORESIGHT, "bench", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for s in SUITES:
        assert re.search(rf"^    {s.name}\s", r.stdout, re.M), s.name
    r = subprocess.run([FORESIGHT, "bench", "nas", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    assert "--backing" in r.stdout and "--size" in r.stdout
    assert "--lines" not in r.stdout and "--patterns" not in r.stdout
    assert "--repeat" in r.stdout


def test_markdown_table_aligns_pads_and_escapes():
    t = Table("a | title", ("name", "time"), [("x|y", "1.00 s"), ("skipped",)],
              left=("name",))
    assert tables.markdown_table(t).splitlines() == [
        "**a \\| title**", "",
        "| name | time |",
        "|:---|---:|",
        "| x\\|y | 1.00 s |",
        "| skipped |  |"]


def test_markdown_document_says_command_commit_and_conditions():
    res = {"suite": "micro", "mem_limit_bytes": 256 << 20, "ratio": 4.0,
           "readahead_kb": 128, "repeat": 3,
           "environment": {"kernel": "6.1.0", "cpus": 2, "cgroup_version": 1,
                           "read_ahead_kb": {"vda": 128}, "page_cluster": 3,
                           "swap": {"total_bytes": 8 << 30}}}
    text = tables.markdown("foresight bench micro --repeat 3 --markdown m.md", res,
                           [Table("t", ("a",), [("1",)])], ["a note"])
    lines = text.splitlines()
    assert lines[0] == "# foresight bench micro"
    assert "- Command: `foresight bench micro --repeat 3 --markdown m.md`" in lines
    commit = next(ln for ln in lines if ln.startswith("- Commit: "))
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip() or "unknown"
    assert commit.removeprefix("- Commit: ").split()[0] == head
    conditions = next(ln for ln in lines if ln.startswith("- Conditions: "))
    for part in ("memory cap 256.0 MiB", "data 4× the cap", "read_ahead_kb 128",
                 "median of 3"):
        assert part in conditions, conditions
    machine = next(ln for ln in lines if ln.startswith("- Machine: "))
    for part in ("kernel 6.1.0", "2 CPUs", "cgroup v1", "read_ahead_kb vda 128",
                 "swap 8.0 GiB"):
        assert part in machine, machine
    assert lines.index("| a |") < lines.index("a note")


def test_commit_is_unknown_outside_a_checkout(monkeypatch, tmp_path):
    monkeypatch.setattr(tables, "SOURCE_TREE", tmp_path)
    assert tables.commit() == "unknown"


def test_bench_compile_writes_markdown_of_its_table(tmp_path):
    md, js = tmp_path / "c.md", tmp_path / "c.json"
    args = ["bench", "compile", "--lines", "10", "--kernels", "none", "--front-end-lines",
            "none", "--markdown", str(md), "--json", str(js)]
    r = subprocess.run([FORESIGHT, *args], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    text = md.read_text()
    lines = text.splitlines()
    assert lines[0] == "# foresight bench compile"
    assert f"- Command: `foresight {' '.join(args)}`" in lines
    assert any(ln.startswith("- Commit: ") and "unknown" not in ln for ln in lines)
    assert any(ln.startswith("- Machine: kernel ") and " CPUs" in ln for ln in lines)
    res = json.loads(js.read_text())
    row = res["rows"][0]
    header = next(ln for ln in lines if ln.startswith("| input |"))
    assert "| P/O time |" in header
    body = lines[lines.index(header) + 2]
    assert body.startswith(f"| nests-10 | {row['source_lines']:,} |")
    assert res["compiler_version"] in text
    assert not list(tmp_path.glob("*.tmp.*"))


def test_an_unwritable_markdown_path_is_refused_before_the_run(tmp_path, capsys):
    assert main(["bench", "compile", "--lines", "10", "--kernels", "none", "--markdown",
                 str(tmp_path / "no" / "c.md")]) == 2
    assert "no such directory" in capsys.readouterr().err


# Results of the timed suites, made up (no run here), in the shape their measure()
# returns: every suite's tables and notes must render them, on the console and as
# Markdown, with the values in the cells they belong to.
ENV = {"kernel": "6.1.0", "cpus": 2, "mem_total_bytes": 4 << 30, "cgroup_version": 1,
       "read_ahead_kb": {"vda": 128}, "page_cluster": 3, "swap": {"total_bytes": 8 << 30},
       "transparent_hugepage": "madvise", "foresight_env": {"FORESIGHT_RELEASE": "adaptive"}}


def _run(seconds: float) -> dict:
    return {"access_seconds": seconds, "wall_seconds": seconds + 1, "io_stall_seconds": 0.5,
            "read_bytes": 3 << 20, "major_faults": 1234}


def _nas_kernel(name: str) -> dict:
    variants = {v: {**_run(s), "phases": {"copy": s}} for v, s in
                (("O", 4.0), ("P", 2.0), ("P_nofilter", 2.5), ("D", 3.0))}
    return {"name": name, "mb": 96, "verified": True, "problems": [], "variants": variants,
            "speedup": 5.0 / 3.0, "stall_reduction": 0.25,
            "coverage": {"prefetched_hit": 0.7, "prefetched_fault": 0.2,
                         "nonprefetched_fault": 0.1},
            "filter": {"filtered_share": 0.125}}


def _nas_repeated(name: str) -> dict:
    """A kernel whose O and P ran three times each: the median run with the range."""
    k = _nas_kernel(name)
    k["variants"]["O"]["walls"] = [5.5, 4.0, 5.0]
    k["variants"]["P"]["walls"] = [3.0, 3.25, 2.5]
    return k


def _nas_timed_out(name: str) -> dict:
    """A kernel whose original run timed out: a killed run is never shown as a time."""
    k = _nas_kernel(name)
    del k["speedup"], k["coverage"], k["filter"]
    k["variants"]["O"]["timed_out"] = True
    return {**k, "verified": False, "problems": ["O: timed out"], "stall_reduction": None}


def _near(ratio: float, o: float, p: float | None, killed: str = "") -> dict:
    """One ratio of bench incore's --near, as measure_near returns it."""
    med = {"O": o, "P": p, "P_off": p}
    return {"ratio": ratio, "mem_limit_bytes": 64 << 20, "median_wall_seconds": med,
            "wall_seconds": {}, "failed": {killed: "killed by the OOM killer"} if killed else {},
            "p_over_o": None if p is None else p / o, "p_off_over_o": None}


MADE_UP = {
    "micro": ({"suite": "micro", "mem_limit_bytes": 64 << 20, "ratio": 4.0, "readahead_kb": 128,
               "repeat": 3, "environment": ENV, "rows": [
                   {"pattern": "backward", "backing": "file", "data_bytes": 256 << 20,
                    "orig": _run(3.0), "hints": _run(1.5), "speedup": 2.0},
                   {"pattern": "backward", "backing": "anon", "data_bytes": 256 << 20,
                    "skipped": "needs swap"}]},
              ["| backward | file | 3.00 s | 1.50 s | 2.00× |", "| backward | anon | "
               "skipped: needs swap |"]),
    "overhead": ({"suite": "overhead", "repeat": 5, "environment": ENV, "meets_targets": True,
                  "median": {"filtered_prefetch_ns": 3.56, "madvise_ns": 712.0,
                             "filtered_over_madvise": 0.005}},
                 ["| filtered prefetch | 3.56 ns | <= 5 ns |", "| filtered prefetch / madvise "
                  "| 0.50% | <= 1% |", "The filtered prefetch meets the targets."]),
    "compiler": ({"suite": "compiler", "mem_limit_bytes": 64 << 20, "ratio": 3.0,
                  "readahead_kb": 128, "repeat": 3, "environment": ENV, "rows": [
                      {"kernel": "gather", "data_bytes": 192 << 20, "O": _run(2.0),
                       "P": _run(1.0), "speedup": 2.0, "micro_hints": {"access_seconds": 0.9}},
                      {"kernel": "walk", "data_bytes": 192 << 20, "O": _run(1.0),
                       "P": _run(1.0), "speedup": 1.0},
                      {"kernel": "zsolve", "data_bytes": 192 << 20,
                       "failed": "zsolve-P killed by the OOM killer"}]},
                 ["| gather | 2.00 s | 1.00 s | 2.00× | 0.90 s | 1,234 | 1,234 | 3.0 MiB |",
                  "| walk | 1.00 s | 1.00 s | 1.00× |  |",
                  "| zsolve | failed: zsolve-P killed by the OOM killer | – |"]),
    "nas": ({"suite": "nas", "size": "default", "mem_limit_bytes": 64 << 20,
             "readahead_kb": 128, "backing": "anon", "environment": ENV,
             "repeat": 3, "kernels": [_nas_kernel("is"), _nas_timed_out("cg"),
                                        _nas_repeated("mg")],
             "sweep": [{"fraction_of_memory": 0.5, "mb": 32, "O": _run(1.0), "P": _run(0.5)},
                       *({"in_core": c, "variant": v, "mb": 32, "run": _run(0.25)}
                         for c in ("cold", "warm") for v in ("O", "P"))]},
            ["| is | 96 MiB | 5.00 s | 3.00 s | 1.67× | 0.50 s | 0.50 s | 25% | 1,234 | "
             "1,234 | 70%/20%/10% | 12.5% | 3.50 s | yes |",
             "| 0.5× | 32 MiB | 2.00 s | 1.50 s | 1.33× |", "| cold | 1.25 s | 1.25 s |",
             "is phases (O / D direct only / P direct+indirect): copy 4.00/3.00/2.00 s",
             "| cg | 96 MiB | timed out | 3.00 s | – |",
             "| mg | 96 MiB | 5.00 s (4.00–5.50) | 3.00 s (2.50–3.25) | 1.67× |",
             "O and P: the median of 3 alternating cold runs each"]),
    "incore": ({"suite": "incore", "mb": 128, "kernel_mb": 256, "repeat": 5, "target": 1.03,
                "near": [0.5, 1.0], "near_target": 1.05, "environment": ENV, "rows": [
                    {"program": "sp", "args": [],
                     **{c: {"median_wall_seconds": {"O": 1.0, "P": 1.5, "P_off": 1.125},
                            "wall_seconds": {}, "p_over_o": 1.5, "p_off_over_o": 1.125}
                        for c in ("warm", "cold")},
                     "near": [_near(0.5, 1.0, 1.02), _near(1.0, 3.0, None, "P")]},
                    {"program": "is", "args": [],
                     **{c: {"median_wall_seconds": {"O": 2.0, "P": 2.0, "P_off": 2.0},
                            "wall_seconds": {}, "p_over_o": 1.0, "p_off_over_o": 1.0}
                        for c in ("warm", "cold")},
                     "near": [_near(0.5, 2.0, 2.2), _near(1.0, 4.0, 4.0)]}]},
               ["| sp | 1.000 s | 1.500 s | 1.500 | 1.125 | 1.000 s | 1.500 s | 1.500 | 1.125 |",
                "| is | 2.000 s | 2.000 s | 1.000 | 1.000 |",
                "**near the cap: cold runs with the data at 0.5, 1 times a memory cap, median "
                "of 5 alternating runs; over 1.05: is at 0.5; failed: sp at 1 (P killed by "
                "the OOM killer)**",
                "| sp | 1.000 s | 1.020 s | 1.020 | 3.000 s | killed by the OOM killer | – |",
                "| is | 2.000 s | 2.200 s | 1.100 | 4.000 s | 4.000 s | 1.000 |"]),
    "demo": ({"suite": "demo", "mem_limit_bytes": 128 << 20, "ratio": 3.0,
              "data_bytes": 384 << 20, "readahead_kb": 128, "repeat": 2, "in_core_runs": 3,
              "swap": "swap 8.0 GiB active", "environment": ENV, "rows": [
                  {"program": "spmv", "backing": "file", "O": _run(2.0), "P": _run(1.0),
                   "O_in_core": _run(0.0), "P_in_core": _run(0.0), "speedup": 1.5},
                  {"program": "heat", "skipped": "no swap"}]},
             ["| spmv | mmap file | 3.00 s | 2.00 s | 1.50× | 0.50 s → 0.50 s |",
              "| heat | malloc (swap) | skipped: no swap |"]),
    "aasfp": ({"suite": "aasfp", "size": "default", "readahead_kb": 128, "repeat": 3,
               "in_core_runs": 5, "environment": ENV,
               "sizes": {"video_bytes": 1 << 30, "video_cap": "256M", "volume_edge": 1024,
                         "volvis_cap": "256M", "fft_points": [1 << 24, 1 << 25],
                         "fft_block": 1 << 20, "fft_cap": "128M", "text_bytes": 128 << 20},
               "rows": [
                   {"config": "backward1", "name": "Backward 1", "program": "video",
                    "what": "backward, every frame", "data_bytes": 1 << 30,
                    "mem_limit_bytes": 256 << 20, "in_core": False,
                    "expected": {"text": "≥ 8× (≥ 95%)", "target": 8.0, "masked": 0.95},
                    "paper": {"o": 52.54, "p": 7.63, "masked": 0.8475},
                    "O": {**_run(8.0), "verified": True, "user_seconds": 0.75,
                          "sys_seconds": 0.25, "walls": [9.0, 8.5, 9.5]},
                    "P": {**_run(0.0), "verified": True, "user_seconds": 1.0,
                          "sys_seconds": 0.5, "io_stall_seconds": 0.025},
                    "pt": {"pt_started": 1, "pt_calls": 524288, "pt_issued_bytes": 1 << 30,
                           "pt_cached_bytes": 8 << 20, "pt_expired": 12,
                           "pt_mispredicts": 0, "pt_stopped": None},
                    "speedup": 9.0, "masked": 0.95, "extra_cpu_seconds": 0.5, "met": True,
                    "problems": [], "failed": False},
                   {"config": "fft1", "name": "FFT 16M", "program": "oocfft",
                    "what": "in place, 4 KiB records", "data_bytes": 256 << 20,
                    "mem_limit_bytes": 128 << 20, "in_core": False,
                    "expected": {"text": "≥ 0.98×", "target": 0.98, "masked": None},
                    "paper": {"o": 33.42, "p": 33.74, "masked": 0.0},
                    "O": {**_run(4.0), "verified": True},
                    "P": {"verified": False, "why": "killed by the OOM killer"},
                    "pt": {}, "problems": ["P: killed by the OOM killer"], "failed": True},
                   {"config": "getc", "name": "getc", "program": "getc_sum",
                    "what": "a cached file read by getc, in core", "data_bytes": 128 << 20,
                    "mem_limit_bytes": None, "in_core": True,
                    "expected": {"text": "P/O ≤ 1.02", "target": 1.02, "masked": None},
                    "paper": None, "O": {**_run(0.0), "verified": True},
                    "P": {**_run(0.01), "verified": True}, "pt": {"pt_started": 0},
                    "speedup": 1 / 1.01, "masked": None, "met": True, "problems": [],
                    "failed": False},
                   {"config": "volvis1", "name": "Vol Vis 1", "program": "volvis",
                    "what": "orthographic, 4 KiB bricks", "data_bytes": 1 << 30,
                    "mem_limit_bytes": 256 << 20, "expected": {"text": "≥ 3× (≥ 90%)"},
                    "build_failed": "P: foresight cc --prefetch-thread failed",
                    "problems": ["P: foresight cc --prefetch-thread failed"], "failed": True}]},
              ["| Backward 1 | video: backward, every frame | 1.0 GiB, 256.0 MiB cap | "
               "9.00 s (8.50–9.50) | 1.00 s | 9.00× | 95% | ≥ 8× (≥ 95%) | yes | "
               "52.54 → 7.63 (85%) | identical |",
               "| FFT 16M | oocfft: in place, 4 KiB records | 256.0 MiB, 128.0 MiB cap | "
               "5.00 s | killed by the OOM killer | – |",
               "| getc | getc_sum: a cached file read by getc, in core | 128.0 MiB, in core | "
               "1.00 s | 1.01 s | P/O 1.010 |",
               "| Vol Vis 1 | volvis: orthographic, 4 KiB bricks | 1.0 GiB, 256.0 MiB cap | "
               "build failed: P: foresight cc --prefetch-thread failed |",
               "| Backward 1 | ran | 0.50 s | 25 ms | 1.00 s | +0.50 s | – | 524,288 | "
               "1.0 GiB | 8.0 MiB | 12 | 0 |",
               "| getc | none |",
               "Cold runs: the page cache dropped before each, read_ahead_kb 128, video 1.0 GiB "
               "under 256M, volvis 1024^3 under 256M, oocfft 16M and 32M points"]),
}


def test_made_up_results_cover_every_suite_but_compile():
    # compile's table is checked on a real run above, sharedcache's (a simulation, fast)
    # in tests/sharedcache, simspeed's and coloring's on small real runs (tests/bench);
    # every other here.
    assert set(MADE_UP) == {s.name for s in SUITES} - {"compile", "sharedcache", "simspeed",
                                                       "coloring"}


@pytest.mark.parametrize("name", sorted(MADE_UP))
def test_tables_and_notes_render_each_suites_results(name, capsys):
    s = next(s for s in SUITES if s.name == name)
    res, expected = MADE_UP[name]
    text = tables.markdown(f"foresight bench {name}", res, s.tables(res), s.notes(res))
    for line in expected:
        assert any(ln.startswith(line) for ln in text.splitlines()), (line, text)
    assert "FORESIGHT_RELEASE=adaptive" in text   # the runtime's settings are said
    s.show(res)
    out = capsys.readouterr().out
    assert f"foresight bench {name}" in out and "Traceback" not in out
    for t in s.tables(res):
        assert t.title in out.replace("\n", " ") or t.title.split(":")[0] in out


@pytest.mark.parametrize("name", sorted(n for n in MADE_UP
                                        if next(s for s in SUITES if s.name == n).plots))
def test_plots_of_each_suites_results(name, tmp_path):
    s = next(s for s in SUITES if s.name == name)
    written = s.plot(MADE_UP[name][0], str(tmp_path / "plots"))
    assert written and all(Path(f).stat().st_size > 0 for f in written)
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(
        Path(f).name for f in written)


def test_a_failed_kernel_is_reported_and_the_others_still_run(monkeypatch, tmp_path, capsys):
    # bench compiler at 10x once stopped at zsolve's OOM kill and wrote no table: a run
    # that fails now marks its kernel's row and the suite goes on (exit status 1).
    import contextlib

    from foresight.bench import compiler as bc

    monkeypatch.setenv("FORESIGHT_BENCH_DIR", str(tmp_path))
    monkeypatch.setattr(bc.readahead, "Setting", lambda *a: contextlib.nullcontext())
    monkeypatch.setattr(bc, "build", lambda name, out, src: ({"O": f"{name}-O",
                                                             "P": f"{name}-P"}, []))
    monkeypatch.setattr(bc, "devices_for", lambda files: [])

    def run_kernel(exe, data, size, mem):
        if exe == "zsolve-P":
            raise bc.KernelFailed("zsolve-P killed by the OOM killer", "details")
        return {**_run(2.0 if exe.endswith("-O") else 1.0), "checksum": "c 1",
                "wall_seconds": 3.0, "cgroup_version": 1}

    monkeypatch.setattr(bc, "run_kernel", run_kernel)
    monkeypatch.setattr(bc.bound, "in_core", lambda *a: {"runs": {}, "t_cpu": None})
    monkeypatch.setattr(bc.bound, "assess", lambda *a: None)
    res = bc.compiler(64 << 20, 1.0, 128, ["zsolve", "stencil"], 1, {})
    rows = {r["kernel"]: r for r in res["rows"]}
    assert rows["zsolve"]["failed"] == "zsolve-P killed by the OOM killer"
    assert rows["stencil"]["speedup"] == 2.0
    assert "zsolve: details" in capsys.readouterr().err
    assert set(rows["zsolve"]) == {"kernel", "what", "data_bytes", "backing", "cc_report",
                                   "failed"}
    # By ratio too: the table of speedups by ratio shows the failed kernel as missing.
    ratios = bc.by_ratio([res, {**res, "ratio": 2.0}])
    text = tables.markdown("foresight bench compiler", ratios, bc.SUITE.tables(ratios),
                           bc.SUITE.notes(ratios))
    assert "| zsolve | – | – |" in text and "| stencil | 2.00× | 2.00× |" in text
    assert bc.SUITE.exit_code(res) == 1 and bc.SUITE.exit_code({"rows": [rows["stencil"]]}) == 0
