"""Programs that trap a hint which reads past what the program reads (tests/compiler/
traps/*.c): each puts the last element of an array the hints look ahead in just before
a PROT_NONE page, so a look-ahead load one element too far kills the hinted build.
Built by cc and by foresight cc, run with the hints on though the data fit
(FORESIGHT_INCORE=hint): the same stdout and exit status.  A line `/* cflags: ... */`
gives a program's own compiler flags."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
TRAPS = sorted((Path(__file__).parent / "traps").glob("*.c"))


@pytest.mark.parametrize("src", TRAPS, ids=[p.stem for p in TRAPS])
def test_hints_never_read_past_the_program(src, tmp_path):
    m = re.search(r"/\* cflags: (.*?) \*/", src.read_text(errors="replace"))
    flags = m.group(1).split() if m else []
    env = {**os.environ, "FORESIGHT_INCORE": "hint"}
    out = {}
    for name, cc in (("cc", ["cc"]), ("foresight", [FORESIGHT, "cc"])):
        exe = tmp_path / name
        subprocess.run([*cc, "-O2", *flags, "-o", str(exe), str(src), "-lm"], check=True,
                       cwd=tmp_path)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env,
                           cwd=tmp_path)
        out[name] = (r.returncode, r.stdout)
    assert out["foresight"] == out["cc"]
