"""The NAS-style kernels (benchmarks/nas/*.c): every kernel present, built by foresight cc
with and without hints (-O2 -Wall -Wextra -Werror), verifies at a tiny size (2 MiB) with its main
arrays in ordinary memory and in mapped files, prints the same result lines both ways,
is clean under ASan/UBSan, and rejects a bad argument; IS and CG also run out of core
under `foresight run --mem 32M` with identical results with and without hints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from foresight.harness.environment import swap_summary

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
NAS = Path(__file__).resolve().parents[2] / "benchmarks" / "nas"
KERNELS = sorted(p.stem for p in NAS.glob("*.c"))
WARN = ["-Wall", "-Wextra", "-Werror"]
VARIANTS = {
    "O": ["--no-prefetch", "-O2", *WARN],
    "P": ["-O2", *WARN],
    # the hinted build under the sanitizers: hints must not read out of bounds either
    "asan": ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", *WARN],
}
TINY = ["--mb", "2", "--iters", "1"]


def _build(kernel: str, variant: str, out: Path) -> tuple[str, subprocess.CompletedProcess]:
    exe = out / f"{kernel}-{variant}"
    p = subprocess.run([FORESIGHT, "cc", *VARIANTS[variant], f"-I{NAS}", str(NAS / f"{kernel}.c"),
                        "-o", str(exe), "-lm"], capture_output=True, text=True, timeout=300)
    return str(exe), p


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[tuple[str, str], tuple[str, subprocess.CompletedProcess]]:
    """Every kernel in every variant, built two at a time (the builds dominate this file)."""
    out = tmp_path_factory.mktemp("nas")
    jobs = [(k, v) for k in KERNELS for v in VARIANTS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = pool.map(lambda kv: _build(kv[0], kv[1], out), jobs)
        return dict(zip(jobs, done, strict=True))


def exe(builds, kernel: str, variant: str) -> str:
    path, p = builds[(kernel, variant)]
    assert p.returncode == 0, f"foresight cc {kernel}.c ({variant}) failed:\n{p.stderr}"
    # The driver's fallback to the original source would hide a generator bug.
    assert "the transformed code did not compile" not in p.stderr, p.stderr
    return path


def run(cmd: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def check_verified(p: subprocess.CompletedProcess, what: str) -> None:
    assert p.returncode == 0, f"{what}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    lines = p.stdout.splitlines()
    assert len(lines) >= 2 and lines[-1] == "verification SUCCESSFUL", f"{what}:\n{p.stdout}"
    assert "verification" not in "\n".join(lines[:-1])


def test_kernels_found():
    assert {"is", "cg", "ep", "ft"} <= set(KERNELS)


@pytest.mark.parametrize("kernel", KERNELS)
def test_verifies_identically_with_and_without_hints(kernel, builds, tmp_path):
    outs = {}
    for variant in ("O", "P"):
        for backing in ("anon", "file"):
            p = run([exe(builds, kernel, variant), *TINY, "--backing", backing,
                     "--data-dir", str(tmp_path)])
            check_verified(p, f"{kernel}-{variant} --backing {backing}")
            outs[variant, backing] = p.stdout
            # the harness contract on stderr: arrays, phases, footprint close to --mb
            arrays = re.findall(r"^array (\S+) (\d+) (\S+)$", p.stderr, re.M)
            footprint = re.findall(r"^footprint (\d+)$", p.stderr, re.M)
            assert arrays and re.search(r"^phase \S+ [0-9.]+$", p.stderr, re.M), p.stderr
            assert len(footprint) == 1 and int(footprint[0]) == sum(int(a[1]) for a in arrays)
            assert 0.7 <= int(footprint[0]) / (2 << 20) <= 1.2, footprint
    assert os.listdir(tmp_path) == [], "--backing file left data behind"
    assert outs["O", "anon"] == outs["P", "anon"], "results differ with hints"
    assert len(set(outs.values())) == 1, "results differ between anon and file backing"


@pytest.mark.parametrize("kernel", KERNELS)
def test_clean_under_asan_and_ubsan(kernel, builds):
    # The main arrays live until exit (nas_common.h), which LeakSanitizer would report.
    p = run([exe(builds, kernel, "asan"), "--mb", "2", "--iters", "1"],
            env={"ASAN_OPTIONS": "detect_leaks=0", "UBSAN_OPTIONS": "print_stacktrace=1"})
    check_verified(p, f"{kernel} under ASan/UBSan")
    assert "runtime error" not in p.stderr and "Sanitizer" not in p.stderr, p.stderr


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("args, word", [(["--mb", "x"], "--mb"), (["--iters", "0"], "--iters"),
                                        (["--backing", "disk"], "--backing"),
                                        (["--mb"], "value"), (["--size", "3"], "unknown")])
def test_bad_argument_exits_2(kernel, args, word, builds):
    p = run([exe(builds, kernel, "O"), *args])
    assert p.returncode == 2 and word in p.stderr, p.stderr
    assert "verification" not in p.stdout


def _runtime_ok(need: int) -> str | None:
    if os.geteuid() != 0:
        return "a cold out-of-core run of malloc'd data needs root (drop_caches)"
    if swap_summary()["total_bytes"] < need:
        return (f"malloc'd data beyond the cap needs swap ({swap_summary()['total_bytes']} "
                "bytes active); run `foresight swap enable` as root")
    return None


@pytest.mark.parametrize("kernel, mb", [("is", 96), ("cg", 64)])
def test_out_of_core_same_results_with_and_without_hints(kernel, mb, builds, tmp_path, swap):
    """IS at 3x and CG at 2x data/memory under a 32 MiB cap (Linux's default 128 KiB
    readahead): both variants really page (major faults) and print the same results."""
    why = _runtime_ok(mb << 20)
    if why:
        pytest.skip(why)
    outs = {}
    for variant in ("O", "P"):
        report = tmp_path / f"{variant}.json"
        p = subprocess.run([FORESIGHT, "run", "--mem", "32M", "--cold", "--readahead-kb", "128",
                            "--json", str(report), "--", exe(builds, kernel, variant),
                            "--mb", str(mb), "--iters", "1"],
                           capture_output=True, text=True, timeout=300)
        check_verified(p, f"{kernel}-{variant} under --mem 32M")
        r = json.loads(report.read_text())
        assert r["mem_limit_bytes"] == 32 << 20
        if variant == "O":
            assert r["major_faults"] > 1000, r["major_faults"]
        outs[variant] = p.stdout
    assert outs["O"] == outs["P"]
