"""Random loop nests: hints must never change what a program does.

tests/compiler/gen/nests.py writes, per seed, one C program of KERNELS loop nests of the shapes
`foresight cc` transforms (affine nests of every loop form, indirect references, CSR rows,
pointer walks, struct members; every fourth program runs some nests in two threads).  A
generated program has no undefined behaviour and sizes every array exactly, ending it flush
against a PROT_NONE page, so a look-ahead load past an array faults.  Each program is
compiled with `foresight cc --no-prefetch` (O) and with hints (P) under ASan/UBSan and run
three ways: O, P, and P with the requests issued at the hint (FORESIGHT_INLINE=all), the
smallest look-ahead (4K: distances of a few iterations, so the hints cross the loops' ends
and the window's edges often) and every release carried out (FORESIGHT_RELEASE=pageout).
All three must exit alike and print the same hash of every array, with no sanitizer
report; programs with threads are also built and run under TSan.  The report must show
hints in most kernels, so the comparison cannot pass by transforming nothing.

A failing seed's program: `python3 tests/compiler/gen/nests.py SEED > prog.c` (with `--threads`
for seeds divisible by 4).  A compiler bug found here that is not fixed yet goes into
XFAIL (strict), its reason naming the minimised case.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gen.nests import Program, generate
from test_differential import (
    SANITIZE,
    SANITIZER_MARKERS,
    behaviour,
    foresight_cc_pair,
    run,
)

KERNELS = 8
# 42 programs of 8 nests: 336 nests.  76 and 80 (threaded) showed TSan reports when the
# runtime published its residency table where TSan could not see it.
SEEDS = list(range(1, 41)) + [76, 80]
XFAIL: dict[int, str] = {}       # seed -> why, and the minimised case
MIN_HINTED = 0.6                 # of all kernels, at least this share get hints,
MIN_HINTED_PER_FAMILY = 0.4      # and of each family's (affine, indirect, csr, ...)
TSAN = ["-fsanitize=thread", "-g"]
AT_THE_HINT = {"FORESIGHT_INLINE": "all", "FORESIGHT_LOOKAHEAD": "4K",
               "FORESIGHT_RELEASE": "pageout"}
SANITIZER_ENV = {"TSAN_OPTIONS": "atexit_sleep_ms=0"}   # TSan sleeps 1 s at exit otherwise
MARKERS = (*SANITIZER_MARKERS, "ThreadSanitizer")

# seed -> per kernel (its family, whether its nest got hints); read by the floor test
HINTED: dict[int, list[tuple[str, bool]]] = {}


def threaded(seed: int) -> bool:
    return seed % 4 == 0


def build_pair(d: Path, flags: list[str], tag: str, link: list[str]) -> tuple[Path, Path]:
    """O and P of prog.c, compiled side by side; P's report in report{tag}.json."""
    foresight_cc_pair([*flags, "prog.c", "-o", f"O{tag}", *link],
                      [*flags, "--report-json", f"report{tag}.json", "prog.c", "-o", f"P{tag}",
                       *link], cwd=d)
    return d / f"O{tag}", d / f"P{tag}"


def hinted_kernels(prog: Program, report: list[dict]) -> list[tuple[str, bool]]:
    """Per kernel, its family and whether the compiler put hints in a nest of it."""
    lines = [e["line"] for e in report if e.get("hints")]
    return [(family, any(a <= n <= b for n in lines))
            for family, (a, b) in zip(prog.families, prog.nest_lines, strict=True)]


def compare(seed: int, label: str, o_exe: Path, p_exe: Path) -> None:
    stats = p_exe.with_suffix(".stats.json")
    o = run(o_exe, extra_env=SANITIZER_ENV)
    p = run(p_exe, extra_env=SANITIZER_ENV)
    a = run(p_exe, extra_env={**SANITIZER_ENV, **AT_THE_HINT, "FORESIGHT_STATS": str(stats)})
    for name, r in (("O", o), ("P", p), ("P, requests at the hint", a)):
        err = r.stderr.decode(errors="replace")
        hits = [m for m in MARKERS if m in err]
        assert not hits, (
            f"seed {seed} {label} {name}: sanitizer report (exit {r.returncode}):\n{err}")
    lines = o.stdout.decode().splitlines()
    assert o.returncode == 0 and len(lines) == KERNELS, (
        f"seed {seed} {label}: the baseline did not run every kernel (exit {o.returncode}):\n"
        f"{o.stdout[-500:]!r}\n{o.stderr[-2000:]!r}")
    for name, r in (("P", p), ("P, requests at the hint", a)):
        if behaviour(r) != behaviour(o):
            diff = [f"  O {x}  {name} {y}" for x, y in
                    zip(lines, r.stdout.decode().splitlines(), strict=False) if x != y]
            pytest.fail(f"seed {seed} {label}: {name} differs from O (exit {o.returncode} vs "
                        f"{r.returncode}):\n" + "\n".join(diff) + f"\n{r.stderr[-2000:]!r}")
    considered = json.loads(stats.read_text())["global"]["considered"]
    assert considered > 0 or not any(h for _, h in HINTED[seed]), (
        f"seed {seed} {label}: hints were compiled in but none ran")


@pytest.mark.parametrize("seed", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=XFAIL[s])) if s in XFAIL
    else s for s in SEEDS], ids=[f"seed{s}" for s in SEEDS])
def test_random_nests_hints_do_not_change_behaviour(tmp_path, seed):
    prog = generate(seed, KERNELS, threads=threaded(seed))
    (tmp_path / "prog.c").write_text(prog.source)
    link = ["-pthread"] if prog.threads else []
    o, p = build_pair(tmp_path, ["-O1", *SANITIZE], "", link)
    report = json.loads((tmp_path / "report.json").read_text())
    HINTED[seed] = hinted_kernels(prog, report)
    compare(seed, "asan-ubsan", o, p)
    if prog.threads:
        o, p = build_pair(tmp_path, ["-O1", *TSAN], "-tsan", link)
        compare(seed, "tsan", o, p)


def test_random_nests_mostly_get_hints():
    """The comparisons above mean little if the compiler left the nests alone."""
    if len(HINTED) < len(SEEDS) // 2:
        pytest.skip("needs the per-seed tests above in the same run")
    kernels = [k for ks in HINTED.values() for k in ks]
    hinted = sum(h for _, h in kernels)
    assert hinted >= MIN_HINTED * len(kernels), (
        f"only {hinted} of {len(kernels)} generated nests got hints")
    for family in sorted({f for f, _ in kernels}):
        of = [h for f, h in kernels if f == family]
        assert sum(of) >= MIN_HINTED_PER_FAMILY * len(of), (
            f"only {sum(of)} of {len(of)} {family} nests got hints")
