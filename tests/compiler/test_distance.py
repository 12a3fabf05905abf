"""schedule/distance.py is the one owner of each hint's distance: the table the
generated code hands to foresight_nest_enter and the report say the same thing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from foresight.compiler.options import CompileOptions
from foresight.compiler.pipeline import transform

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").glob("*.c"))


def _tables(text: str) -> dict[int, tuple[list[int], list[tuple[int, int]]]]:
    """Per nest number: the leads of its streams and its loops' (indirect, fixed)."""
    out: dict[int, tuple[list[int], list[tuple[int, int]]]] = {}
    for m in re.finditer(r"static const struct foresight_nest_pipe __fs_np_(\d+)\[\] = "
                         r"\{(.*?)\};", text):
        pipes = [(int(a), int(b)) for a, b in re.findall(r"\{(\d+), (\d+)\}", m.group(2))]
        out[int(m.group(1))] = ([], pipes)
    for m in re.finditer(r"static const struct foresight_nest_stream __fs_ns_(\d+)\[\] = "
                         r"\{(.*?)\};", text):
        out[int(m.group(1))][0].extend(
            int(lead) for lead in re.findall(r"\{\d+, (\d+), [^{}]*\}", m.group(2)))
    return out


@pytest.mark.parametrize("preset", ["adaptive", "paper"])
def test_emitted_tables_and_the_report_agree_on_every_hint(preset):
    checked, leads_seen = 0, set()
    for src in CORPUS:
        out = transform(src, [], CompileOptions(preset=preset))
        tables = _tables(out.text)
        nests = [e for e in out.report if e["pass"] == "prefetch"]
        for n, entry in enumerate(nests):
            hints = entry.get("hints") or []
            if not hints:
                assert n not in tables, (src.name, entry["line"])
                continue
            leads, pipes = tables[n]
            leads_seen.update(leads)
            rules = [h["distance_rule"] for h in hints]
            assert sorted(leads) == sorted(r["lead"] for r in rules if r["kind"] == "stream")
            assert sum(i for i, _ in pipes) == sum(r["kind"] == "indirect" for r in rules)
            assert {f for _, f in pipes} == {r["fixed"] for r in rules}
            assert all((r["fixed"] > 0) == (preset == "paper") for r in rules)
            for h, r in zip(hints, rules, strict=True):
                if preset == "paper":
                    assert h["distance"] == r["fixed"] * (1 if r["lead"] == 0 else 2)
                elif r["kind"] == "stream" and r["lead"]:
                    assert h["distance"].endswith(
                        "plus the indirect distance" if r["lead"] == 1 else "twice that")
            checked += len(hints)
    assert checked > 50
    assert leads_seen == {0, 1, 2}     # every rule occurs (gather_across.c: 2 ds)
