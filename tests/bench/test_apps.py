"""The scientist-style kernels of `foresight bench compiler` (heat3d, md, zsolve, cholqr,
seismo): each is plain C99 with no Foresight calls that cc builds cleanly, and built by
foresight cc with hints (P) and without (O) it prints what cc's build prints, with the
hints kept on in core (FORESIGHT_INCORE=hint, the hinted nests run them: the runtime
counts their calls) and under `foresight run --mem 16M` with three times that much data
(both exit 0, the same checksum)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from foresight.bench.common import build, foresight_exe
from foresight.bench.compiler import kernels_dir

# name: where its data live ("anon": malloc'd or static, pages to swap under a cap;
# "file": a file it maps, written by its `create`)
APPS = {"heat3d": "anon", "md": "anon", "zsolve": "anon", "cholqr": "anon", "seismo": "file"}
SMALL = 4 << 20
CAP = 16 << 20
CAPPED = 3 * CAP


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, tuple[dict, list]]:
    tmp = tmp_path_factory.mktemp("apps")
    return {n: build(n, tmp, kernels_dir() / f"{n}.c") for n in APPS}


def checksum(stdout: str) -> str:
    """A kernel's output without its timing line (what must not depend on hints)."""
    assert re.search(r"^access_seconds \d+\.\d+$", stdout, re.M), stdout
    return "".join(ln for ln in stdout.splitlines(True) if not ln.startswith("access_seconds"))


def data_arg(name: str, size: int, directory: Path, creator: str) -> str:
    """The FILE argument: `-` for malloc'd data, else the kernel's file, made once."""
    if APPS[name] == "anon":
        return "-"
    path = directory / f"{name}-{size}.dat"
    if not path.exists():
        subprocess.run([creator, "create", str(path), str(size)], check=True)
    return str(path)


def test_plain_c_without_foresight(cc, tmp_path):
    for name in APPS:
        src = kernels_dir() / f"{name}.c"
        assert not re.search(r"foresight|#\s*pragma|_Pragma", src.read_text()), name
        r = subprocess.run([cc, "-std=gnu99", "-O2", "-Wall", "-Wextra", "-Werror", str(src),
                            "-o", str(tmp_path / name)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_same_output_in_core_with_hints_on(built, cc, disk_tmp, tmp_path):
    env = dict(os.environ, FORESIGHT_INCORE="hint")
    for name, (exes, report) in built.items():
        assert any(e.get("hints") for e in report), f"{name}: foresight cc placed no hints"
        plain = str(tmp_path / f"{name}-cc")
        subprocess.run([cc, "-O2", str(kernels_dir() / f"{name}.c"), "-o", plain], check=True)
        data = data_arg(name, SMALL, disk_tmp, plain)
        stats = tmp_path / f"{name}.stats.json"
        out = {}
        for v, exe in (("cc", plain), ("O", exes["O"]), ("P", exes["P"])):
            r = subprocess.run([exe, "run", data, str(SMALL)], capture_output=True, text=True,
                               env=dict(env, FORESIGHT_STATS=str(stats)) if v == "P" else env)
            assert r.returncode == 0, f"{name} {v}: {r.stderr}"
            out[v] = checksum(r.stdout)
        assert out["O"] == out["cc"] and out["P"] == out["cc"], name
        calls = json.loads(stats.read_text())["global"]["considered"]
        assert calls > 0, f"{name}: the hinted nests ran without hints"


def run_capped(exe: str, data: str) -> subprocess.CompletedProcess:
    """`foresight run --mem 16M` of one kernel run.  No retry: a hinted run killed where
    the original completes is a failure (the v1 cgroup's kills with swap free came from
    stale reclaim statistics, which the harness and the runtime now keep fresh)."""
    return subprocess.run([foresight_exe(), "run", "--mem", str(CAP), "--", exe, "run", data,
                           str(CAPPED)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", list(APPS))
def test_same_output_under_a_small_cap(built, root, disk_tmp, name, request):
    if APPS[name] == "anon":
        request.getfixturevalue("swap")
    exes, _ = built[name]
    data = data_arg(name, CAPPED, disk_tmp, exes["O"])
    out = {}
    for v in ("O", "P"):
        r = run_capped(exes[v], data)
        assert r.returncode == 0, f"{name} {v}: exit {r.returncode}\n{r.stderr[-2000:]}"
        out[v] = checksum(r.stdout)
    assert out["P"] == out["O"], name
