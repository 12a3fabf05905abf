"""`foresight ionode`: the I/O-node server started, answering NBD clients through the
filter, writing its statistics, stopped; bad input refused on one line.  (The server's
concurrency, restarts and bad requests: sharedcache/tests/test_server.c.)"""

from __future__ import annotations

import json
import subprocess
import sys

FORESIGHT = [sys.executable, "-m", "foresight.cli"]


def ionode(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*FORESIGHT, "ionode", *args], capture_output=True, text=True)


def test_a_started_node_serves_its_disk_and_stops(tmp_path):
    disk = tmp_path / "disk.img"
    disk.write_bytes(bytes(range(256)) * 4096)   # 1 MiB
    sock, pid, stats = tmp_path / "s.sock", tmp_path / "n.pid", tmp_path / "stats.jsonl"
    p = ionode("start", "--disk", str(disk), "--socket", str(sock), "--pidfile", str(pid),
               "--cache", "256K", "--stats", str(stats))
    assert p.returncode == 0, p.stderr
    try:
        got = subprocess.run(["nbdcopy", f"nbd+unix:///c0?socket={sock}", "-"],
                             capture_output=True)
        assert got.returncode == 0, got.stderr
        assert got.stdout == disk.read_bytes()
    finally:
        assert ionode("stop", "--pidfile", str(pid)).returncode == 0
    last = json.loads(stats.read_text().splitlines()[-1])
    assert last["event"] == "exit"
    c0 = last["clients"][0]
    assert c0["name"] == "c0" and c0["misses"] >= 16   # 16 blocks of 64K read once


def test_bad_input_is_one_line(tmp_path):
    disk = tmp_path / "disk.img"
    disk.write_bytes(b"\0" * 65536)
    for args, message in (
            (["--disk", str(tmp_path / "nope")], "give an existing disk file"),
            (["--disk", str(disk), "--cache", "10K"], "cache capacity must be at least one"),
            (["--disk", str(disk), "--cache", "lots"], "lots"),
            (["--disk", str(disk), "--policy", "best"], "invalid choice: 'best'"),
            (["--disk", str(disk), "--disk-delay", "5s"], "Nus or Nms")):
        p = ionode("start", "--socket", str(tmp_path / "s"), "--pidfile",
                   str(tmp_path / "p"), *args)
        assert p.returncode == 2, (args, p.stderr)
        assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = ionode("stop", "--pidfile", str(tmp_path / "none.pid"))
    assert p.returncode == 2 and "no server pid" in p.stderr
