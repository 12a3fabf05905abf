"""`foresight bench simspeed`: the three simulators on one small trace, alternated,
with speeds and medians in the JSON and the table."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("libcachesim", reason="libCacheSim's wheels are for Linux x86-64")


def test_simspeed_reports_every_simulator(tmp_path):
    out = tmp_path / "s.json"
    p = subprocess.run([sys.executable, "-m", "foresight.cli", "bench", "simspeed",
                        "--requests", "40000", "--repeat", "2", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    assert res["demand_reads"] == 20000
    for key in ("lru", "fine", "libcachesim"):
        assert len(res["runs_per_s"][key]) == 2 and all(v > 0 for v in res["runs_per_s"][key])
        assert res["median_per_s"][key] > 0
    assert "libCacheSim 0.3.5 LRU" in p.stdout
    core = res["core_ns_per_request_64_clients"]
    assert set(core) == {"demand-only", "plain", "coarse", "fine"}
    assert all(v > 0 for v in core.values())


def test_too_few_requests_is_one_line():
    p = subprocess.run([sys.executable, "-m", "foresight.cli", "bench", "simspeed",
                        "--requests", "10"], capture_output=True, text=True)
    assert p.returncode == 2 and "--requests 10: at least 10000" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
