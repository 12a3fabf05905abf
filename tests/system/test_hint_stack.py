"""The stack a hint can use below its entry into the library, bounded from the code.

A hint may be made by a signal handler on a small alternate stack; the library drops
it when less than FS_HINT_STACK bytes of that stack are left (runtime/src/thread_guard.c).
That is only safe while no path from an entry point goes deeper.  GCC's call-graph
output (-fcallgraph-info=su: each function's frame and its calls) gives the deepest
path from every entry a hint takes; it must leave a kilobyte of FS_HINT_STACK for the
C library's system-call wrappers at its leaves.  runtime/tests/test_altstack.c measures
the same thing on a real alternate stack."""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "runtime" / "src"
ENTRIES = ["foresight__prefetch_slow", "foresight__release_slow",
           "foresight__prefetch_release_slow", "foresight__filtered_check",
           "foresight__nest_enter", "foresight__streams_step", "foresight__stream_step",
           "foresight__random_begin", "foresight__random_end"]
LIBC_MARGIN = 1024


def hint_stack_bound() -> int:
    m = re.search(r"#define FS_HINT_STACK (\d+)", (SRC / "internal.h").read_text())
    assert m, "FS_HINT_STACK is not defined in internal.h"
    return int(m.group(1))


def call_graph(tmp: Path):
    """Frame sizes and calls of every runtime function, built as the library is (-O2)."""
    size: dict[str, int] = {}
    calls: dict[str, set[str]] = {}
    by_name: dict[str, list[str]] = {}
    taken: dict[str, set[str]] = {}  # per file: functions whose address is taken
    for c in sorted(SRC.glob("*.c")):
        subprocess.run(["gcc", "-std=c11", "-O2", "-fPIC", "-D_GNU_SOURCE", "-DNDEBUG",
                        "-DFORESIGHT_BUILDING_RUNTIME", "-fcallgraph-info=su",
                        f"-I{ROOT / 'runtime' / 'include'}", f"-I{SRC}", f"-I{ROOT / 'common'}",
                        "-c", str(c), "-o", str(tmp / (c.stem + ".o"))],
                       check=True, cwd=tmp)
        text = (tmp / (c.stem + ".ci")).read_text()
        source = re.sub(r"/\*.*?\*/|//[^\n]*", "", c.read_text(), flags=re.S)
        source = re.sub(r'"(\\.|[^"\\])*"', '""', source)
        for m in re.finditer(r'node: \{ title: "([^"]+)" label: "([^\\"]+)\\n[^"]*?(\d+) bytes',
                             text):
            title, name = m.group(1), m.group(2)
            size[title] = int(m.group(3))
            by_name.setdefault(name.split(".")[0], []).append(title)
            # Passed, stored or listed as a value (not called, not cast): a callback.
            if re.search(rf"[,(={{]\s*{re.escape(name.split('.')[0])}\s*[,)}};]", source):
                taken.setdefault(str(c), set()).add(title)
        for m in re.finditer(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', text):
            source_fn, target = m.group(1), m.group(2)
            if target == "__indirect_call":
                calls.setdefault(source_fn, set()).add(f"@taken:{source_fn.split(':')[0]}")
            else:
                calls.setdefault(source_fn, set()).add(target)
    return size, calls, by_name, taken


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_no_hint_path_goes_deeper_than_the_bound_the_library_drops_hints_by(tmp_path):
    probe = subprocess.run(["gcc", "-fcallgraph-info=su", "-x", "c", "-c", "-", "-o",
                            str(tmp_path / "p.o")], input="int x;", text=True,
                           capture_output=True, cwd=tmp_path)
    if probe.returncode != 0:
        pytest.skip("gcc without -fcallgraph-info (GCC 10 or later has it)")
    size, calls, by_name, taken = call_graph(tmp_path)

    def targets(t: str) -> list[str]:
        if t.startswith("@taken:"):
            return sorted(taken.get(t[len("@taken:"):], ()))
        if t in size:
            return [t]
        return by_name.get(t.split(":")[-1].split(".")[0], [])

    @cache
    def deepest(t: str, on_path: frozenset = frozenset()) -> tuple[int, tuple[str, ...]]:
        best: tuple[int, tuple[str, ...]] = (0, ())
        for callee in calls.get(t, ()):
            for r in targets(callee):
                if r in on_path or r == t:
                    continue  # recursion is not bounded by this check; none is expected
                d = deepest(r, on_path | {t})
                if d[0] > best[0]:
                    best = d
        name = t.split(":")[-1]
        return size.get(t, 0) + best[0], (f"{name}({size.get(t, 0)})",) + best[1]

    bound = hint_stack_bound()
    worst = {}
    for entry in ENTRIES:
        found = by_name.get(entry + "_abi" + abi()) or by_name.get(entry)
        assert found, f"{entry}: not in the runtime's call graph"
        worst[entry] = max(deepest(t) for t in found)
    for entry, (depth, path) in worst.items():
        assert depth + LIBC_MARGIN <= bound, \
            f"{entry}: {depth} bytes deep ({' > '.join(path)}); FS_HINT_STACK is {bound}"
    assert max(d for d, _ in worst.values()) > 1000  # the graph was read: real paths found


def abi() -> str:
    m = re.search(r"#define FORESIGHT__ABI (\d+)",
                  (ROOT / "runtime" / "include" / "foresight.h").read_text())
    return m.group(1) if m else ""
