"""`foresight cluster run`: clients of one real I/O node, each through its own nbdfuse
view of the node's disk and in its own memory cgroup.  Their output is the program's
own; a `foresight cc` client's prefetches reach the node as NBD_CMD_CACHE (the node's
trace shows them per client) and its writes reach the disk; a node that cannot be
reached leaves the prefetches local with one line said; bad input is one line."""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

FORESIGHT = [sys.executable, "-m", "foresight.cli"]
CLIENTS = Path(__file__).parent / "clients"


@pytest.fixture(scope="module")
def tools():
    for tool in ("nbdkit", "nbdfuse", "fusermount3"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} missing: run `make setup`")
    if not os.path.exists("/dev/fuse") or os.geteuid() != 0:
        pytest.skip("needs /dev/fuse and root")


def build(tmp_path: Path, name: str, hinted: bool) -> str:
    exe = tmp_path / f"{name}-{'P' if hinted else 'O'}"
    cc = [*FORESIGHT, "cc"] if hinted else ["cc"]
    p = subprocess.run([*cc, "-O2", str(CLIENTS / f"{name}.c"), "-o", str(exe)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return str(exe)


def disk(tmp_path: Path, mib: int) -> Path:
    rnd = random.Random(7)
    path = tmp_path / "disk.img"
    words = mib << 17
    path.write_bytes(struct.pack(f"<{words}Q", *(rnd.getrandbits(64) for _ in range(words))))
    return path


def cluster(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*FORESIGHT, "cluster", "run", *args], capture_output=True,
                          text=True, timeout=300)


def test_hinted_clients_prefetch_through_the_node_and_print_what_the_original_does(
        tools, tmp_path):
    d = disk(tmp_path, 8)
    scan_o, scan_p = build(tmp_path, "scan", False), build(tmp_path, "scan", True)
    want = "".join(subprocess.run([scan_o, str(d), str(c), "2", "2"], capture_output=True,
                                  text=True, check=True).stdout for c in range(2))
    trace, out = tmp_path / "node.trace", tmp_path / "cluster.json"
    p = cluster("--clients", "2", "--disk", str(d), "--client-mem", "16M", "--cache", "4M",
                "--trace", str(trace), "--json", str(out), "--", scan_p, "{disk}", "{client}",
                "{clients}", "2")
    assert p.returncode == 0, p.stderr
    assert p.stdout == want
    res = json.loads(out.read_text())
    assert [c["exit_code"] for c in res["clients"]] == [0, 0]
    assert all(c["prefetches_to_node"] > 0 for c in res["clients"])
    ops = [line.split()[:2] for line in trace.read_text().splitlines()
           if not line.startswith("#")]
    for client in ("0", "1"):
        assert [client, "P"] in ops and [client, "R"] in ops
    assert "client 0:" in p.stderr and "prefetches sent to the node" in p.stderr


def test_clients_writes_reach_the_disk(tools, tmp_path):
    d = disk(tmp_path, 2)
    stamp = build(tmp_path, "stamp", True)
    p = cluster("--clients", "3", "--disk", str(d), "--client-mem", "16M", "--", stamp,
                "{disk}", "{client}", "{clients}")
    assert p.returncode == 0, p.stderr
    words, block = (2 << 20) // 8, 65536 // 8      # shares of whole 64 KiB blocks
    share = [(c * 32 // 3 * block, (c + 1) * 32 // 3 * block) for c in range(3)]
    for c, (lo, hi) in enumerate(share):
        assert f"client {c} stamped {hi - lo} of {hi - lo}" in p.stdout
    data = struct.unpack(f"<{words}Q", d.read_bytes())
    for c, (lo, hi) in enumerate(share):
        assert all(data[i] == (c + 1) << 56 | i for i in range(lo, hi))


def test_striped_nodes_each_serve_their_blocks(tools, tmp_path):
    """--ionodes 3: block b of the disk is node b mod 3's (each node's trace holds only
    its blocks, the reads and the prefetches of every client), and every client reads
    what the original reads from the file itself."""
    d = disk(tmp_path, 8)
    scan_o, scan_p = build(tmp_path, "scan", False), build(tmp_path, "scan", True)
    want = "".join(subprocess.run([scan_o, str(d), str(c), "2", "2"], capture_output=True,
                                  text=True, check=True).stdout for c in range(2))
    trace, out = tmp_path / "node.trace", tmp_path / "cluster.json"
    p = cluster("--clients", "2", "--ionodes", "3", "--disk", str(d), "--client-mem", "16M",
                "--cache", "6M", "--trace", str(trace), "--json", str(out), "--", scan_p,
                "{disk}", "{client}", "{clients}", "2")
    assert p.returncode == 0, p.stderr
    assert p.stdout == want
    assert "3 I/O nodes striped (2.0 MiB cache each" in p.stderr
    res = json.loads(out.read_text())
    assert res["ionodes"] == 3 and res["node_cache_bytes"] == 2 << 20
    assert all(c["prefetches_to_node"] > 0 for c in res["clients"])
    assert not trace.exists()
    for k in range(3):
        ops = [line.split()[:3] for line in Path(f"{trace}.{k}").read_text().splitlines()
               if not line.startswith("#")]
        assert ops and all(int(b) % 3 == k for _, _, b in ops)
        for client in ("0", "1"):
            assert any(o[:2] == [client, "R"] for o in ops)
        assert any(o[1] == "P" for o in ops)


def test_writes_through_striped_nodes_reach_the_disk(tools, tmp_path):
    d = disk(tmp_path, 2)
    stamp = build(tmp_path, "stamp", True)
    p = cluster("--clients", "3", "--ionodes", "2", "--disk", str(d), "--client-mem", "16M",
                "--", stamp, "{disk}", "{client}", "{clients}")
    assert p.returncode == 0, p.stderr
    words, block = (2 << 20) // 8, 65536 // 8
    share = [(c * 32 // 3 * block, (c + 1) * 32 // 3 * block) for c in range(3)]
    data = struct.unpack(f"<{words}Q", d.read_bytes())
    for c, (lo, hi) in enumerate(share):
        assert f"client {c} stamped {hi - lo} of {hi - lo}" in p.stdout
        assert all(data[i] == (c + 1) << 56 | i for i in range(lo, hi))


PREFETCHER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libnbd.h>
/* N prefetches on FORESIGHT_NBD, then, the connection still open, the prefetches each
 * trace file (argv[2...]) holds, once they stop growing. */
int main(int argc, char **argv)
{
    struct nbd_handle *h = nbd_create();
    if (nbd_connect_uri(h, getenv("FORESIGHT_NBD")) == -1) {
        fprintf(stderr, "%s\n", nbd_get_error());
        return 1;
    }
    long n = atol(argv[1]), blocks = nbd_get_size(h) / 65536;
    for (long i = 0; i < n; i++)
        if (nbd_cache(h, 65536, (uint64_t)(i % blocks) * 65536, 0) == -1) {
            fprintf(stderr, "%s\n", nbd_get_error());
            return 1;
        }
    for (int k = 2; k < argc; k++) {
        long seen = -1, now = 0;
        for (int tries = 0; tries < 50 && now != seen; tries++) {
            seen = now, now = 0;
            usleep(100000);
            FILE *f = fopen(argv[k], "r");
            char line[256];
            while (f && fgets(line, sizeof line, f))
                now += strstr(line, " P ") != NULL;
            if (f)
                fclose(f);
        }
        printf("%ld\n", now);
    }
    return 0;
}
"""


def test_striped_prefetches_reach_the_nodes_while_the_client_runs(tools, tmp_path):
    """A connection that carries only prefetches (the runtime's) still has them reach
    the nodes as they are sent, not all at once when it closes."""
    src, exe = tmp_path / "prefetcher.c", tmp_path / "prefetcher"
    src.write_text(PREFETCHER)
    p = subprocess.run(["cc", "-O2", str(src), "-o", str(exe), "-lnbd"], capture_output=True,
                       text=True)
    assert p.returncode == 0, f"libnbd-dev missing (`make setup`): {p.stderr}"
    trace = tmp_path / "node.trace"
    p = cluster("--clients", "1", "--ionodes", "2", "--size", "4M", "--trace", str(trace),
                "--", str(exe), "4000", f"{trace}.0", f"{trace}.1")
    assert p.returncode == 0, p.stderr
    assert all(int(n) >= 1500 for n in p.stdout.split()), p.stdout   # 2000 sent to each


def test_an_unreachable_node_leaves_prefetches_local(tools, tmp_path):
    d = disk(tmp_path, 4)
    scan_o, scan_p = build(tmp_path, "scan", False), build(tmp_path, "scan", True)
    want = subprocess.run([scan_o, str(d), "0", "1", "50"], capture_output=True, text=True,
                          check=True).stdout
    env = dict(os.environ, FORESIGHT_NBD=f"nbd+unix:///c0?socket={tmp_path}/none.sock",
               FORESIGHT_NBD_FILE=str(d))
    # enough passes that the connecting thread has failed and said so before the end
    p = subprocess.run([scan_p, str(d), "0", "1", "50"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0 and p.stdout == want
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot connect" in lines[0] and "stay local" in lines[0]


def test_bad_input_is_one_line(tools, tmp_path):
    d = disk(tmp_path, 1)
    for args, message in (
            (["--disk", str(d)], "no program given"),
            (["--disk", str(d), "--clients", "0", "--", "true"], "--clients must be 1 to 64"),
            (["--disk", str(tmp_path / "nope"), "--", "true"], "give an existing disk file"),
            (["--size", "1K", "--", "true"], "at least one 64K block"),
            (["--disk", str(d), "--client-mem", "lots", "--", "true"], "lots"),
            (["--", "true"], "one of the arguments --disk --size is required"),
            (["--disk", str(d), "--timeout", "0", "--", "true"], "--timeout 0.0: give seconds"),
            (["--disk", str(d), "--ionodes", "0", "--", "true"], "--ionodes must be 1 to 16"),
            (["--disk", str(d), "--ionodes", "4", "--cache", "128K", "--", "true"],
             "leaves each less than one 64K block"),
            (["--disk", str(d), "--json", str(tmp_path / "no" / "x.json"), "--", "true"],
             "cannot write")):
        p = cluster(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_each_view_reads_ahead_as_told(tools, tmp_path):
    probe = ("import os, sys; d = os.stat(sys.argv[1]).st_dev; "
             "print(open(f'/sys/class/bdi/{os.major(d)}:{os.minor(d)}/read_ahead_kb').read()"
             ".strip())")
    p = cluster("--clients", "2", "--size", "1M", "--client-readahead-kb", "0", "--",
                sys.executable, "-c", probe, "{disk}")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["0", "0"]


@pytest.mark.parametrize("ionodes", ["1", "2"])
def test_a_terminated_run_leaves_nothing_mounted_or_running(tools, tmp_path, ionodes):
    import signal
    import time
    proc = subprocess.Popen([*FORESIGHT, "cluster", "run", "--clients", "2", "--size", "1M",
                             "--ionodes", ionodes, "--", "sleep", "60"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(200):   # until both views are mounted and the clients started
            mounts = [line for line in Path("/proc/self/mounts").read_text().splitlines()
                      if "foresight-cluster-" in line]
            if len(mounts) == 2:
                break
            time.sleep(0.05)
        assert len(mounts) == 2
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    work = {line.split()[1].rsplit("/", 1)[0] for line in mounts}
    left = [line for line in Path("/proc/self/mounts").read_text().splitlines()
            if any(w in line for w in work)]
    assert left == []
    assert all(not Path(w).exists() for w in work)
    assert subprocess.run(["pgrep", "-f", next(iter(work))], capture_output=True).stdout == b""


def test_output_passes_through_byte_for_byte_and_stdin_is_empty(tools, tmp_path):
    blob = tmp_path / "blob"
    blob.write_bytes(bytes(range(256)) * 16)
    p = subprocess.run([*FORESIGHT, "cluster", "run", "--size", "1M", "--clients", "1",
                        "--", "sh", "-c", f"cat {blob}; cat"], capture_output=True,
                       input=b"not for the clients\n", timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == blob.read_bytes()


# ---- --launcher: the clients as the ranks of a launcher (mpiexec) ----

FAKE_LAUNCHER = """#!{python}
# A launcher as mpiexec starts ranks: CMD -n N PROG ARGS, rank i with {var}=i.
import os, subprocess, sys
assert sys.argv[1] == "-n"
n = int(sys.argv[2])
procs = [subprocess.Popen(sys.argv[3:], env=dict(os.environ, **{{{var!r}: str(i)}}))
         for i in range(n)]
sys.exit(max(p.wait() for p in procs))
"""


def fake_launcher(tmp_path: Path, var: str) -> str:
    path = tmp_path / f"launch-{var}"
    path.write_text(FAKE_LAUNCHER.format(python=sys.executable, var=var))
    path.chmod(0o755)
    return str(path)


def test_a_launchers_ranks_are_the_clients_each_in_its_own_cgroup(tools, tmp_path):
    """Each rank finds its client by the rank its launcher gave it (MPICH's and Open
    MPI's variables), runs in that client's capped cgroup with that client's view, and
    its output is collected per client, in client order."""
    d = disk(tmp_path, 8)
    scan = build(tmp_path, "scan", True)
    want = "".join(subprocess.run([scan, str(d), str(c), "3", "1"], capture_output=True,
                                  text=True, check=True).stdout for c in range(3))
    probe = tmp_path / "probe.sh"
    probe.write_text('#!/bin/sh\necho "cgroups $(grep -c foresight- /proc/self/cgroup) '
                     'client $FORESIGHT_CLIENT of $FORESIGHT_CLIENTS node ${FORESIGHT_NBD:+set}" '
                     '>&2\nexec "$@"\n')
    probe.chmod(0o755)
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK"):
        out = tmp_path / f"{var}.json"
        p = cluster("--clients", "3", "--disk", str(d), "--client-mem", "16M",
                    "--launcher", fake_launcher(tmp_path, var), "--json", str(out), "--",
                    str(probe), scan, "{disk}", "{client}", "{clients}", "1")
        assert p.returncode == 0, p.stderr
        assert p.stdout == want
        res = json.loads(out.read_text())
        assert [c["exit_code"] for c in res["clients"]] == [0, 0, 0]
        assert [c["stderr"] for c in res["clients"]] == [   # in a cgroup of ours, told
            f"cgroups 1 client {i} of 3 node set\n" for i in range(3)]
        assert all(c["wall_seconds"] > 0 for c in res["clients"])
        assert len({c["cgroup"] for c in res["clients"]}) == 3


def test_a_launcher_that_gives_no_rank_is_one_line(tools, tmp_path):
    p = cluster("--clients", "2", "--size", "1M", "--launcher",
                fake_launcher(tmp_path, "NOT_A_RANK"), "--", "true")
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "ran no client" in lines[0] and "no rank" in lines[0], p.stderr
    p = cluster("--clients", "2", "--size", "1M", "--launcher", "no-such-mpiexec", "--", "true")
    assert p.returncode == 2 and "no such command" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def mpi_scan(tmp_path_factory) -> str:
    """clients/mpi_scan.c built by `FORESIGHT_CC=mpicc foresight cc` (MPICH's wrapper)."""
    if shutil.which("mpiexec") is None or shutil.which("mpicc") is None:
        pytest.fail("MPICH missing: run `make setup`")
    exe = tmp_path_factory.mktemp("mpi") / "mpi_scan"
    p = subprocess.run([*FORESIGHT, "cc", "-O2", str(CLIENTS / "mpi_scan.c"), "-o", str(exe)],
                       capture_output=True, text=True, env=dict(os.environ, FORESIGHT_CC="mpicc"))
    assert p.returncode == 0, p.stderr
    return str(exe)


def test_an_mpi_programs_ranks_share_the_node(tools, mpi_scan, tmp_path):
    """MPICH's mpiexec runs a `foresight cc` MPI program (built with mpicc): every rank is
    the client of its MPI rank, reads its share of the disk through its own view, sends
    its prefetches to the node, and the ranks still talk to each other (MPI_Reduce)."""
    d = disk(tmp_path, 8)
    out = tmp_path / "mpi.json"
    p = cluster("--clients", "2", "--disk", str(d), "--client-mem", "16M", "--launcher",
                "mpiexec", "--json", str(out), "--", mpi_scan)
    assert p.returncode == 0, p.stderr
    words = struct.unpack(f"<{d.stat().st_size // 8}Q", d.read_bytes())
    half = len(words) // 2
    parts = [sum(words[:half]) % 2**64, sum(words[half:]) % 2**64]
    assert p.stdout == (f"rank 0 of 2 part {parts[0]}\ntotal {sum(parts) % 2**64}\n"
                        f"rank 1 of 2 part {parts[1]}\n")
    res = json.loads(out.read_text())
    assert res["launcher"] == "mpiexec"
    assert all(c["prefetches_to_node"] > 0 for c in res["clients"])


def test_an_mpi_abort_is_reported_not_as_clients_that_never_ran(tools, mpi_scan, tmp_path):
    """A rank calling MPI_Abort ends the job (Hydra kills every rank with its wrapper):
    the run's status is the abort's, the aborting rank's stderr is shown, and no client
    is said never to have run."""
    d = disk(tmp_path, 8)
    p = cluster("--clients", "2", "--disk", str(d), "--launcher", "mpiexec", "--", mpi_scan,
                "abort")
    assert p.returncode == 5, p.stderr
    assert "rank 1 aborting" in p.stderr
    assert "never ran" not in p.stderr and "Traceback" not in p.stderr
    assert "client 0: killed by its launcher" in p.stderr
