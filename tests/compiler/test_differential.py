"""Differential tests for `foresight cc`: hints must never change what a program does.

Every program in tests/corpus (trap programs written against careless prefetching
transformations) and a fixed set of Csmith programs is compiled with `foresight cc
--no-prefetch` (the baseline, O) and with hints (P).  Both must print exactly the same
stdout and stderr and exit with the same status; the corpus's P must also behave
identically with FORESIGHT_DISABLE=1.  Both are also built with
-fsanitize=address,undefined, which catches a look-ahead load past the end of an array
(e.g. b[i+d] in a[b[i]]).  tests/compiler/test_random_nests.py does the same for generated nests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus"
CORPUS = sorted(CORPUS_DIR.glob("*.c"))
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g"]
SANITIZER_MARKERS = ("AddressSanitizer", "UndefinedBehaviorSanitizer", "LeakSanitizer",
                     "runtime error:", "SUMMARY: ")
RUN_TIMEOUT = 30  # seconds; every corpus program runs in well under one

# Csmith: fixed seeds whose programs (csmith 2.3.0) finish in milliseconds, also under
# ASan/UBSan (the seeds left out run for seconds there).  Another csmith version may
# generate different programs; a seed whose baseline does not finish within
# CSMITH_TIMEOUT is skipped, counted and reported as a warning.  Without sanitizers only
# the first CSMITH_PLAIN seeds are built.
CSMITH_SEEDS = [s for s in range(1, 91) if s not in {11, 12, 15, 26, 27, 39, 44, 63, 65, 82}]
CSMITH_PLAIN = 12
CSMITH_OPTIONS = ["--no-bitfields", "--no-packed-struct", "--max-funcs", "3",
                  "--max-block-depth", "3", "--max-array-dim", "2",
                  "--max-expr-complexity", "6"]
# Csmith's arrays are a few hundred bytes: against a real machine's blocks and memory no
# loop is worth a hint and P would be O byte for byte.  P is compiled for 64-byte pages
# and blocks and 4 KiB of memory instead, which puts hints in most programs.
CSMITH_SMALL_MACHINE = ["--fs-page", "64", "--fs-block", "64", "--fs-mem", "4K"]
CSMITH_TIMEOUT = 2.0
CSMITH_MIN_RUN = 0.9        # of the seeds built, at least this share must be compared
CSMITH_MIN_HINTED = 0.6     # and of those compared, at least this share must have hints


def foresight_cc(*args: str, cwd: Path) -> None:
    p = subprocess.run([FORESIGHT, "cc", *args], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, (
        f"`foresight cc {' '.join(args)}` failed with exit {p.returncode}:\n{p.stderr}")
    # The driver falls back to the unchanged source when the transformed code does not
    # compile; that hides a code generator bug from a comparison of outputs.
    assert "the transformed code did not compile" not in p.stderr, p.stderr


def foresight_cc_pair(o_args: list[str], p_args: list[str], cwd: Path) -> None:
    """`foresight cc --no-prefetch O_ARGS` and `foresight cc P_ARGS` side by side (two
    CPUs); both must succeed with no word from the driver (its warnings start with
    "foresight cc": a fallback to the original text, a transformation that failed)."""
    cmds = [[FORESIGHT, "cc", "--no-prefetch", *o_args], [FORESIGHT, "cc", *p_args]]
    procs = [subprocess.Popen(c, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for c in cmds]
    for cmd, p in zip(cmds, procs, strict=True):
        _, err = p.communicate()
        assert p.returncode == 0, f"`{' '.join(cmd[1:])}` failed ({p.returncode}):\n{err}"
        assert "the transformed code did not compile" not in err, err
        assert "foresight cc" not in err, f"`{' '.join(cmd[1:])}`: the driver warned:\n{err}"


def run(exe: Path, *args: str, extra_env: dict[str, str] | None = None,
        timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "FORESIGHT_DISABLE"}
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    env.update(extra_env or {})
    return subprocess.run([str(exe), *args], cwd=exe.parent, capture_output=True,
                          env=env, timeout=timeout)


def behaviour(p: subprocess.CompletedProcess) -> tuple[int, bytes, bytes]:
    return p.returncode, p.stdout, p.stderr


def assert_no_sanitizer_report(name: str, p: subprocess.CompletedProcess) -> None:
    err = p.stderr.decode(errors="replace")
    hits = [m for m in SANITIZER_MARKERS if m in err]
    assert not hits, f"{name}: sanitizer report (exit {p.returncode}):\n{err}"


def corpus_cflags(src: Path) -> list[str]:
    """Extra flags a trap program names on its second line: `/* cflags: ... */`."""
    lines = src.read_text(encoding="utf-8").splitlines()
    if len(lines) > 1 and lines[1].startswith("/* cflags:"):
        return lines[1].removeprefix("/* cflags:").removesuffix("*/").split()
    return []


def test_corpus_is_present_and_labelled():
    assert len(CORPUS) >= 20, f"expected ~20 trap programs in {CORPUS_DIR}"
    for src in CORPUS:
        first = src.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("/* trap:"), f"{src.name}: first line must name its trap"


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "asan-ubsan"])
@pytest.mark.parametrize("src", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_hints_do_not_change_behaviour(tmp_path, src, sanitize):
    flags = ["-O1", *corpus_cflags(src), *(SANITIZE if sanitize else [])]
    foresight_cc(*flags, "--no-prefetch", str(src), "-o", "O", cwd=tmp_path)
    foresight_cc(*flags, str(src), "-o", "P", cwd=tmp_path)
    o = run(tmp_path / "O")
    p = run(tmp_path / "P")
    d = run(tmp_path / "P", extra_env={"FORESIGHT_DISABLE": "1"})
    # The corpus fits in memory, where nests take their unhinted copies: the hinted
    # versions (split loops, look-ahead loads) run with hints kept on in memory.
    h = run(tmp_path / "P", extra_env={"FORESIGHT_INCORE": "hint"})
    for label, r in (("baseline", o), ("hinted", p), ("hinted, FORESIGHT_DISABLE=1", d),
                     ("hinted, FORESIGHT_INCORE=hint", h)):
        assert_no_sanitizer_report(f"{src.name} {label}", r)
    assert o.stdout, f"{src.name}: the baseline printed nothing"
    assert behaviour(p) == behaviour(o), (
        f"{src.name}: hinted build differs from --no-prefetch\n"
        f"O exit {o.returncode} stdout {o.stdout[:400]!r} stderr {o.stderr[:400]!r}\n"
        f"P exit {p.returncode} stdout {p.stdout[:400]!r} stderr {p.stderr[:400]!r}")
    assert behaviour(h) == behaviour(o), (
        f"{src.name}: hinted build with hints kept on in memory differs from --no-prefetch\n"
        f"O exit {o.returncode} stdout {o.stdout[:400]!r}\n"
        f"H exit {h.returncode} stdout {h.stdout[:400]!r} stderr {h.stderr[:400]!r}")
    assert behaviour(d) == behaviour(p), (
        f"{src.name}: hinted build behaves differently with FORESIGHT_DISABLE=1\n"
        f"P exit {p.returncode} stdout {p.stdout[:400]!r}\n"
        f"D exit {d.returncode} stdout {d.stdout[:400]!r} stderr {d.stderr[:400]!r}")


def csmith_include() -> Path:
    for d in (Path("/usr/include/csmith"), Path("/usr/local/include/csmith")):
        if (d / "csmith.h").exists():
            return d
    found = sorted(Path("/usr").glob("**/include/csmith*/csmith.h"))
    if not found:
        pytest.fail("csmith.h not found: install the Debian package libcsmith-dev "
                    "(`make setup` does)")
    return found[0].parent


@pytest.mark.parametrize("sanitize", [False, True], ids=["plain", "asan-ubsan"])
def test_csmith_programs_hints_do_not_change_behaviour(tmp_path, sanitize):
    csmith = shutil.which("csmith")
    if csmith is None:
        pytest.fail("csmith is not installed: install the Debian packages csmith and "
                    "libcsmith-dev (`make setup` does)")
    inc = csmith_include()
    seeds = CSMITH_SEEDS if sanitize else CSMITH_SEEDS[:CSMITH_PLAIN]
    flags = ["-O1", "-w", f"-I{inc}", *(SANITIZE if sanitize else [])]
    compared, hinted, timed_out, failures = [], [], [], []
    for seed in seeds:
        d = tmp_path / f"seed{seed}"
        d.mkdir()
        g = subprocess.run([csmith, "--seed", str(seed), *CSMITH_OPTIONS, "-o", "prog.c"],
                           cwd=d, capture_output=True, text=True)
        assert g.returncode == 0, f"csmith --seed {seed} failed:\n{g.stderr}"
        foresight_cc_pair([*flags, "prog.c", "-o", "O"],
                          [*flags, *CSMITH_SMALL_MACHINE, "--report-json", "report.json",
                           "prog.c", "-o", "P"], cwd=d)
        try:
            # argument "1" makes a Csmith program print every global's hash, not only the sum
            o = run(d / "O", "1", timeout=CSMITH_TIMEOUT)
        except subprocess.TimeoutExpired:
            timed_out.append(seed)
            continue
        try:
            p = run(d / "P", "1", timeout=max(10 * CSMITH_TIMEOUT, 20))
        except subprocess.TimeoutExpired:
            failures.append(f"seed {seed}: the baseline finished but the hinted build timed out")
            continue
        compared.append(seed)
        if any(e.get("hints") for e in json.loads((d / "report.json").read_text())):
            hinted.append(seed)
        for label, r in (("O", o), ("P", p)):
            err = r.stderr.decode(errors="replace")
            if any(m in err for m in SANITIZER_MARKERS):
                failures.append(f"seed {seed} {label}: sanitizer report:\n{err[-1500:]}")
        if behaviour(p) != behaviour(o):
            failures.append(
                f"seed {seed}: O exit {o.returncode} {o.stdout[-300:]!r}\n"
                f"         P exit {p.returncode} {p.stdout[-300:]!r} {p.stderr[-300:]!r}")
    if timed_out:
        warnings.warn(f"csmith: {len(timed_out)} of {len(seeds)} seeds skipped because "
                      f"the --no-prefetch build ran over {CSMITH_TIMEOUT}s: {timed_out}",
                      stacklevel=1)
    assert not failures, "hints changed Csmith programs' behaviour:\n" + "\n".join(failures)
    assert len(compared) >= CSMITH_MIN_RUN * len(seeds), (
        f"only {len(compared)} of {len(seeds)} Csmith seeds could be compared "
        f"(timed out: {timed_out})")
    assert len(hinted) >= CSMITH_MIN_HINTED * len(compared), (
        f"only {len(hinted)} of {len(compared)} Csmith programs got hints: {hinted}")
