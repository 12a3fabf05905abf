"""Programs whose threads end in ways the library's own threads could get in the way of
(tests/compiler/exits/*.c): the main thread ending with pthread_exit while another
joins it, ending with the raw exit system call after moving its tid word, killed alone
by a seccomp filter, a forked child's raw exit.  Built by cc and by foresight cc, run
with the hints on though the data fit (FORESIGHT_INCORE=hint): the same stdout and exit
status (a signal's death included), within a minute (a hang is a failure)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
PROGRAMS = sorted((Path(__file__).parent / "exits").glob("*.c"))


@pytest.mark.parametrize("src", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_the_process_ends_as_cc_s_build_does(src, tmp_path):
    env = {**os.environ, "FORESIGHT_INCORE": "hint"}
    out = {}
    for name, cc in (("cc", ["cc"]), ("foresight", [FORESIGHT, "cc"])):
        exe = tmp_path / name
        subprocess.run([*cc, "-O2", "-pthread", "-o", str(exe), str(src)], check=True,
                       cwd=tmp_path)
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=env,
                           cwd=tmp_path)
        out[name] = (r.returncode, r.stdout)
    assert out["foresight"] == out["cc"]
