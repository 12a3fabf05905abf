"""The programs of `foresight bench coloring` (benchmarks/coloring), at small sizes:
built with `foresight cc --color -fopenmp` each prints what `cc -fopenmp` prints, the same
with 1, 2 (while writing its color map) and 3 threads, and the map holds the arrays it uses;
what the summaries cannot describe (su2cor's neighbour tables, turb3d's z lines,
apsi's columns, wave5's fields at the particles' cells) is said in --report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
PROGRAMS = Path(__file__).resolve().parents[2] / "benchmarks" / "coloring"

SMALL = {"tomcatv": ("33", "2"), "swim": ("32", "2"), "mgrid": ("3", "1"),
         "hydro2d": ("24", "16", "2"), "applu": ("9", "1"), "su2cor": ("4", "2"),
         "turb3d": ("16", "2"), "wave5": ("1", "2"), "apsi": ("16", "16", "8", "2")}
# What --report must say of the loops no summary describes.
REPORTED = {"su2cor": "u[up[s][mu]][nu]: index is not affine",
            "apsi": "j partitions an inner dimension while an outer subscript is not 0",
            "turb3d": "j partitions an inner dimension while an outer subscript is not 0",
            "wave5": "ex[cj][ci]: index is not affine"}


def run(exe: Path, args, threads: int, **env: str) -> str:
    e = {**os.environ, "OMP_NUM_THREADS": str(threads), **env}
    return subprocess.run([str(exe), *args], env=e, capture_output=True, text=True,
                          check=True, timeout=300).stdout


def test_every_program_has_a_small_size():
    assert {p.stem for p in PROGRAMS.glob("*.c")} == set(SMALL)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_colored_build_prints_what_the_original_prints(tmp_path, name):
    src = PROGRAMS / f"{name}.c"
    plain, colored = tmp_path / "plain", tmp_path / "colored"
    subprocess.run(["cc", "-O2", "-fopenmp", str(src), "-o", str(plain), "-lm"], check=True)
    p = subprocess.run([FORESIGHT, "cc", "--color", "--report", "-O2", "-Wall", "-Wextra",
                        "-Werror", "-fopenmp", str(src), "-o", str(colored), "-lm"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    if name in REPORTED:
        assert REPORTED[name] in p.stdout + p.stderr
    args = SMALL[name]
    want = run(plain, args, 1)
    assert want.strip()
    for threads in (1, 3):   # every loop's result is the same for any number of threads
        assert run(plain, args, threads) == want
        assert run(colored, args, threads) == want
    m = tmp_path / "p.map"
    assert run(colored, args, 2, FORESIGHT_COLOR="sim", FORESIGHT_COLOR_MAP=str(m)) == want
    kinds = [line.split()[0] for line in m.read_text().splitlines() if line.strip()]
    assert "array" in kinds and "ref" in kinds and "run" in kinds
