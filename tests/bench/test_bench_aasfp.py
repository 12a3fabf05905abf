"""`foresight bench aasfp`: its programs are plain C that compute what they claim, its
inputs are made once at the sizes it expects, and `--quick` runs end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from foresight.bench import aasfp

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> dict[str, str]:
    """Every program and mkdata built with plain cc, as any user would."""
    d = tmp_path_factory.mktemp("aasfp")
    out = {}
    for src in sorted(aasfp.programs_dir().glob("*.c")):
        exe = d / src.stem
        r = subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", str(src),
                            "-o", str(exe), "-lm"], capture_output=True, text=True)
        assert r.returncode == 0, f"{src.name}:\n{r.stderr}"
        out[src.stem] = str(exe)
    for name, files in aasfp.SPLIT.items():   # several files, as one program
        exe = d / name
        r = subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                            *[str(aasfp.programs_dir() / f) for f in files], "-o", str(exe)],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{name}:\n{r.stderr}"
        out[name] = str(exe)
    return out


def test_programs_are_plain_c_without_foresight(programs):
    assert set(programs) == {*aasfp.PROGRAMS, *aasfp.SPLIT, "mkdata"}
    for name in programs:
        for f in aasfp.SPLIT.get(name, (f"{name}.c",)):
            text = (aasfp.programs_dir() / f).read_text()
            assert not re.search(r"foresight[_.]|#\s*pragma|_Pragma", text), f


def run(*cmd: str, cwd: Path) -> str:
    r = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_programs_compute_what_they_say(programs, tmp_path):
    p, d = programs, tmp_path
    run(p["mkdata"], "frames", "frames", str(64 * 4096), cwd=d)
    assert "64 of 64 frames" in run(p["video"], "frames", cwd=d)   # backward 1 by default
    assert "32 of 64 frames" in run(p["video"], "frames", "forward", "2", cwd=d)
    # video2, its reads in a file of their own: video's output
    for args in ([], ["forward", "2"], ["backward", "3"]):
        assert run(p["video2"], "frames", *args, cwd=d) == run(p["video"], "frames", *args,
                                                                cwd=d)
    # The FFT: the input's three tones come back at their frequencies, energy is kept.
    run(p["mkdata"], "fft", "x.fft", str(1 << 14), cwd=d)
    out = run(p["oocfft"], "x.fft", "1024", cwd=d)
    error = float(re.search(r"Parseval error (\S+),", out).group(1))
    assert error < 1e-12 and "passes 5" in out, out
    peaks = [int(k) for k in re.findall(r" (\d+):", out.split("peaks")[1])]
    n, f2 = 1 << 14, (1 << 14) // 8 + 5   # tones at f1 = 3 (amplitude 1) and f2 (0.5)
    assert set(peaks[:2]) == {3, n - 3} and peaks[2] in (f2, n - f2), out
    # In memory at once or in four out-of-core passes first: the same spectrum.
    run(p["mkdata"], "fft", "y.fft", str(1 << 14), cwd=d)
    same = run(p["oocfft"], "y.fft", str(1 << 14), cwd=d)
    assert same.split("peaks")[1] == out.split("peaks")[1]
    # The volume: looking along x, 16^3 and 32^3 bricks give the same image.
    run(p["mkdata"], "volume", "v16", "h16", "128", "16", cwd=d)
    run(p["mkdata"], "volume", "v32", "h32", "128", "32", cwd=d)
    run(p["mkdata"], "view", "ortho", "1", "0", "0", cwd=d)
    run(p["mkdata"], "view", "oblique", *aasfp.OBLIQUE, cwd=d)
    a = run(p["volvis"], "h16", "ortho", "v16", cwd=d)
    b = run(p["volvis"], "h32", "ortho", "v32", cwd=d)
    assert "512 of 512 bricks" in a and a.split("image")[1] == b.split("image")[1]
    oblique = run(p["volvis"], "h16", "oblique", "v16", cwd=d)
    visible = int(re.search(r"(\d+) of 512 bricks", oblique).group(1))
    assert 0 < visible < 512, oblique   # the image's corners leave some bricks out
    run(p["mkdata"], "text", "t", "10000", cwd=d)
    assert run(p["getc_sum"], "t", cwd=d).startswith("getc_sum: 10000 bytes")


def test_inputs_are_made_once_at_the_sizes_the_suite_expects(programs, disk_tmp):
    # make() twice: the second finds every file at the size inputs() says, or stops.
    sizes = aasfp.SIZES["quick"]
    for _ in range(2):
        for c in aasfp.CONFIGS:
            aasfp.make(programs["mkdata"], c, sizes, disk_tmp)
            args, _, _ = aasfp.arguments(c, sizes, disk_tmp, disk_tmp, programs["mkdata"])
    for c in aasfp.CONFIGS:
        for _, finals, want in aasfp.inputs(c, sizes, disk_tmp):
            assert [f.stat().st_size for f in finals] == want, c.key
    assert aasfp.space_needed(list(aasfp.CONFIGS), sizes, disk_tmp) == 8 << 20  # FFT copy


def test_quick_end_to_end(root, disk_tmp, tmp_path):
    out = tmp_path / "aasfp.json"
    env = {**os.environ, "FORESIGHT_BENCH_DIR": str(disk_tmp)}
    r = subprocess.run([FORESIGHT, "bench", "aasfp", "--quick", "--repeat", "1",
                        "--json", str(out), "--plots", str(tmp_path / "plots")],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    res = json.loads(out.read_text())
    assert res["suite"] == "aasfp" and res["size"] == "quick" and res["readahead_kb"] == 128
    assert [row["config"] for row in res["rows"]] == [c.key for c in aasfp.CONFIGS]
    for row in res["rows"]:
        assert row["outputs_identical"] and not row["problems"], row["name"]
        assert row["O"]["verified"] and row["P"]["verified"]
        assert row["speedup"] > 0
        # Table 3's check: every cold run started with none of its data cached.
        assert row["in_core"] or row["cold_cached_pages_max"] == 0, row["name"]
    assert "none of its data files' pages cached" in r.stdout
    assert {p.name for p in (tmp_path / "plots").iterdir()} == {"aasfp-time.png",
                                                                 "aasfp-speedup.png"}
    assert "Backward 1" in r.stdout and "52.54 → 7.63" in r.stdout
    # The player with its reads in a file of their own (each file compiled alone): one
    # run anchored at play()'s entry predicted every frame.
    split = next(row for row in res["rows"] if row["config"] == "split1")
    assert split["pt"]["pt_runs"] == 1 and split["pt"]["pt_calls"] == 8192
    assert split["pt"]["pt_mispredicts"] == 0 and split["pt"]["pt_stopped"] is None


@pytest.mark.parametrize("args,word", [
    (["--configs", "xx"], "unknown configuration 'xx'"),
    (["--repeat", "0"], "--repeat"),
    (["--size", "default"], "unrecognized arguments"),
])
def test_bad_options_exit_2(args, word):
    r = subprocess.run([FORESIGHT, "bench", "aasfp", *args], capture_output=True, text=True)
    assert r.returncode == 2 and word in r.stderr, r.stderr
