"""The pass pipeline: passes from a registry, their reports tagged, insertions spliced once."""

from __future__ import annotations

import re
from pathlib import Path

from foresight.compiler.options import CompileOptions
from foresight.compiler.passes import PASSES
from foresight.compiler.passes.api import PassResult
from foresight.compiler.pipeline import transform
from foresight.compiler.report import format_report
from foresight.compiler.rewrite.splice import Insertion, runtime_header

ROOT = Path(__file__).resolve().parents[2]

SOURCE = """\
#include <stdio.h>
double a[1 << 20], b[1 << 20];
int main(void) {
  double s = 0;
  for (int i = 0; i < (1 << 20); i++)
    a[i] = i;
#pragma omp parallel for
  for (int i = 0; i < (1 << 20); i++)
    b[i] = 2 * a[i];
  for (int i = 0; i < (1 << 20); i++)
    s += b[i];
  printf("%g\\n", s);
  return 0;
}
"""


def example_pass():
    """The example pass of docs/architecture.md, from its text."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    code = re.search(r"## Compiler passes.*?```python\n(.*?)```", doc, re.S).group(1)
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 - the documented example, run as written
    return namespace["run"]


def test_the_documented_example_pass_reports_openmp_loops(tmp_path):
    src = tmp_path / "omp.c"
    src.write_text(SOURCE)
    out = transform(src, [], CompileOptions(), passes={**PASSES, "omp_loops": example_pass()})
    mine = [e for e in out.report if e["pass"] == "omp_loops"]
    assert [(e["line"], e["message"]) for e in mine] == [
        (8, "loop i under #pragma omp parallel for")]
    assert all(e["pass"] == "prefetch" for e in out.report if e not in mine)
    text = format_report(out.report)
    assert f"{src}:8: [omp_loops] loop i under #pragma omp parallel for" in text
    assert "3 loop nests" in text      # the summary counts the prefetch pass's nests only
    assert out.changed                 # the prefetch pass's hints are still there


def test_insertions_of_all_passes_are_spliced_once(tmp_path):
    src = tmp_path / "x.c"
    src.write_text(SOURCE)

    def comment(unit, opts):
        return PassResult(insertions=[Insertion(n.root.start, 1, -9, "/* seen */ ")
                                      for n in unit.nests])

    alone = transform(src, [], CompileOptions(), passes={"comment": comment})
    assert alone.changed and alone.text.count("/* seen */") == 3
    assert alone.text.startswith(f"#include {runtime_header()}\n#line 1 ")
    # Line numbers of the user's code do not move.
    body = alone.text.split("\n", 2)[2]
    assert [ln.replace("/* seen */ ", "") for ln in body.splitlines()] == SOURCE.splitlines()
    both = transform(src, [], CompileOptions(), passes={**PASSES, "comment": comment})
    assert both.text.count("/* seen */") == 3 and "foresight_nest_enter" in both.text


def test_a_pass_without_insertions_leaves_the_file_as_written(tmp_path):
    src = tmp_path / "x.c"
    src.write_text(SOURCE)
    out = transform(src, [], CompileOptions(), passes={"none": lambda u, o: PassResult()})
    assert not out.changed and out.text == SOURCE and out.report == []


def test_an_analysis_error_leaves_that_nest_alone_and_the_ir_as_parsed(tmp_path, monkeypatch):
    from foresight.compiler.passes import prefetch

    src = tmp_path / "x.c"
    src.write_text(SOURCE)
    real, seen = prefetch.schedule, []

    def failing(facts, opts):
        seen.append(facts.nest)
        if facts.nest.line == 10:
            raise ValueError("boom")
        return real(facts, opts)

    monkeypatch.setattr(prefetch, "schedule", failing)
    out = transform(src, [], CompileOptions())
    entry = next(e for e in out.report if e["line"] == 10)
    assert entry["skipped"] == "internal error in the analysis (ValueError: boom)"
    assert out.warnings == [f"{src}:10: foresight cc: internal error in the analysis "
                            "(ValueError: boom); the loop nest is compiled unchanged"]
    assert all(n.skipped is None for n in seen)        # the IR is not edited
    assert out.changed and out.text.count("foresight_nest_enter(") == 1   # line 5's nest
