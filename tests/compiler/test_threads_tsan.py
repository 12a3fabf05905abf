"""Hints add no data race: the corpus's threaded programs under ThreadSanitizer.

A hint may load memory earlier than the program does (an index b[i + d], a row pointer);
across a synchronisation point in the loop that load races with another thread's write
(frontend/sync.py).  Each corpus program that uses threads is built with
-fsanitize=thread with and without hints; both must run without a ThreadSanitizer
report and print the same.
"""

from __future__ import annotations

import pytest
from test_differential import CORPUS, behaviour, foresight_cc, run

THREADED = [p for p in CORPUS if "<pthread.h>" in p.read_text(encoding="utf-8")]
TSAN = ["-fsanitize=thread", "-g", "-O1", "-pthread"]


def test_corpus_has_threaded_programs():
    assert len(THREADED) >= 1


@pytest.mark.parametrize("src", THREADED, ids=[p.stem for p in THREADED])
def test_threaded_corpus_is_race_free_with_hints(tmp_path, src):
    foresight_cc(*TSAN, "--no-prefetch", str(src), "-o", "O", cwd=tmp_path)
    foresight_cc(*TSAN, str(src), "-o", "P", cwd=tmp_path)
    env = {"TSAN_OPTIONS": "halt_on_error=1 exitcode=66 atexit_sleep_ms=0"}
    o = run(tmp_path / "O", extra_env=env, timeout=120)
    p = run(tmp_path / "P", extra_env=env, timeout=120)
    for label, r in (("baseline", o), ("hinted", p)):
        err = r.stderr.decode(errors="replace")
        assert "ThreadSanitizer" not in err, f"{src.name} {label}:\n{err[:3000]}"
    assert o.stdout and behaviour(p) == behaviour(o)
