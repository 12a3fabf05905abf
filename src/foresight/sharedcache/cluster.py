"""`foresight cluster run`: clients sharing one I/O node, for real (paper 3, issue 23).

One I/O node (`foresight ionode`: nbdkit with the foresight filter) serves a disk; each
of N clients sees it as a file of its own nbdfuse mount (export `c<i>`: the node's
client id; nbdfuse opens several connections per mount, all under that name) and runs
the program in a memory cgroup of its own whose cap is the client's cache.  The
program finds its client's view of the disk in its arguments (`{disk}`, and `{client}`,
`{clients}` for its rank and their number) or in FORESIGHT_DISK, FORESIGHT_CLIENT and
FORESIGHT_CLIENTS.  With --launcher the clients are the ranks of one launcher command
(`mpiexec -n N`: an MPI program's ranks, each its own client; sharedcache/rank.py).
FORESIGHT_NBD and FORESIGHT_NBD_FILE send the prefetches of a `foresight cc` program on
that file to the node as NBD_CMD_CACHE (runtime/src/remote.c).

The node's cache starts empty and each client's page cache with it (a fresh mount); the
disk given with --disk is served as it is (the clients' writes go to it), one made with
--size is a zero-filled file in the run's own directory, removed after.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from foresight.errors import HarnessError, UsageError
from foresight.harness.process import terminations_interrupt
from foresight.harness.run import Cap, check_mem, signal_name
from foresight.reports import check_writable
from foresight.sharedcache import ionode
from foresight.units import format_size, parse_size

FILE = "nbd"   # the file name in each nbdfuse mount


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--clients", type=int, default=2, metavar="N",
                   help="clients running the program at once (default 2)")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--disk", metavar="FILE", help="the disk file the node serves")
    where.add_argument("--size", metavar="SIZE",
                       help="serve a zero-filled disk of SIZE made for the run")
    p.add_argument("--client-mem", default="16M", metavar="SIZE",
                   help="each client's memory cap: its cache (default 16M)")
    p.add_argument("--cache", default="64M",
                   help="the nodes' cache, all of them together (default 64M)")
    p.add_argument("--ionodes", type=int, default=1, metavar="M",
                   help="I/O nodes the disk is striped over, block by block (default 1)")
    p.add_argument("--per-node-cache", action="store_true",
                   help="--cache is each node's, not all of them together")
    p.add_argument("--block", default="64K", help="its block (default 64K)")
    p.add_argument("--policy", choices=ionode.POLICIES, default="fine",
                   help="the node's prefetch control (default fine)")
    p.add_argument("--epoch", default="10000",
                   help="an epoch of the node: N requests or Nms (default 10000)")
    p.add_argument("--disk-delay", metavar="Nus|Nms",
                   help="the node's disk model: a request per delay (default: the disk as is)")
    p.add_argument("--client-readahead-kb", type=int, metavar="KB",
                   help="each mount's read_ahead_kb (default: the kernel's); 0 leaves every "
                   "read ahead to the program's hints")
    p.add_argument("--trace", metavar="FILE", help="the node's requests, as a sim trace "
                   "(with several nodes node k's in FILE.k)")
    p.add_argument("--stats", metavar="FILE", help="the node's counters per epoch (JSON "
                   "lines; with several nodes node k's in FILE.k)")
    p.add_argument("--json", metavar="FILE", help="the clients' and the node's results")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="kill the clients after S seconds")
    p.add_argument("--launcher", metavar="CMD",
                   help="start the clients as the ranks of a launcher, CMD -n N ... "
                   "(e.g. mpiexec, or 'mpirun --allow-run-as-root'): an MPI program's "
                   "ranks are its clients (default: each client started on its own)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- PROG ARGS ({disk}, {client}, "
                   "{clients} replaced per client)")


def namespace(**given) -> argparse.Namespace:
    """`cluster run`'s options at their defaults with GIVEN set: a run made by code
    (bench sharedcache --live) gets every option a new version adds."""
    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    ns = p.parse_args(["--size", "1M"])   # one of --disk and --size is required
    ns.size = None
    for key, value in given.items():
        if not hasattr(ns, key):
            raise TypeError(f"cluster run has no option {key!r}")
        setattr(ns, key, value)
    return ns


def _check(ns: argparse.Namespace) -> tuple[list[str], int]:
    cmd = list(ns.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise UsageError("no program given: foresight cluster run [options] -- PROG ARGS")
    if ns.client_readahead_kb is not None and not 0 <= ns.client_readahead_kb <= 1 << 20:
        raise UsageError(f"--client-readahead-kb {ns.client_readahead_kb}: 0 to 1048576")
    if ns.timeout is not None and not ns.timeout > 0:
        raise UsageError(f"--timeout {ns.timeout}: give seconds, more than 0")
    check_writable(ns.json)
    if not 1 <= ns.clients <= 64:
        raise UsageError(f"--clients must be 1 to 64, not {ns.clients}")
    if not 1 <= ns.ionodes <= 16:
        raise UsageError(f"--ionodes must be 1 to 16, not {ns.ionodes}")
    if ns.ionodes > 1:
        stripe_plugin()
        block = parse_size(ns.block)
        if block < 512 or block & (block - 1):
            raise UsageError(f"--block {ns.block}: a power of two, at least 512")
        if node_cache(ns) < block:
            raise UsageError(f"--cache {ns.cache} over {ns.ionodes} nodes leaves each less "
                             f"than one {ns.block} block (or give --per-node-cache)")
    mem = parse_size(ns.client_mem)
    check_mem(mem)
    if ns.size is not None and parse_size(ns.size) < 65536:
        raise UsageError(f"--size {ns.size}: the disk must hold at least one 64K block")
    if ns.disk is not None and not Path(ns.disk).is_file():
        raise UsageError(f"--disk {ns.disk!r}: give an existing disk file to serve")
    if ns.launcher is not None:
        try:
            words = shlex.split(ns.launcher)
        except ValueError as e:   # an unclosed quote
            raise UsageError(f"--launcher {ns.launcher!r}: {e}") from None
        if not words or shutil.which(words[0]) is None:
            raise UsageError(f"--launcher {ns.launcher!r}: no such command (`make setup` "
                             "installs MPICH's mpiexec)")
    for tool in ("nbdkit", "nbdfuse", "fusermount3"):
        if shutil.which(tool) is None:
            raise UsageError(f"{tool} is not installed: run `make setup`")
    if not os.path.exists("/dev/fuse"):
        raise UsageError("/dev/fuse is missing: the clients' mounts need FUSE")
    return cmd, mem


def _mount(mnt: Path, uri: str, pidfile: Path, log: Path,
           mounts: list[tuple[Path, subprocess.Popen]]) -> None:
    """nbdfuse of URI on MNT, added to MOUNTS as soon as it is started (so an interrupt
    unmounts it too), then ready (its pid file written) or an error (unmounted)."""
    mnt.mkdir()
    with open(log, "w") as err:
        proc = subprocess.Popen(["nbdfuse", "-P", str(pidfile), str(mnt), uri],
                                stdout=subprocess.DEVNULL, stderr=err)
    mounts.append((mnt, proc))
    for _ in range(200):
        if pidfile.exists() and (mnt / FILE).exists():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.025)
    mounts.pop()
    _unmount(mnt, proc)
    text = log.read_text().strip().splitlines()
    raise HarnessError(f"nbdfuse could not mount {uri}: "
                       f"{text[-1] if text else 'no message'}")


def _read_ahead(mnt: Path, kb: int) -> None:
    """The read_ahead_kb of the mount's view (its FUSE connection's bdi)."""
    dev = os.stat(mnt / FILE).st_dev
    knob = Path(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}/read_ahead_kb")
    try:
        knob.write_text(str(kb))
    except OSError as e:
        raise HarnessError(f"--client-readahead-kb: cannot set {knob}: {e.strerror}") from None


def _unmount(mnt: Path, proc: subprocess.Popen) -> None:
    """Unmount MNT (lazily if it is busy) and wait for its nbdfuse to end.  Tried even
    when MNT does not look mounted: a mount whose nbdfuse died is not seen as one."""
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if subprocess.run(["fusermount3", "-u", str(mnt)], **quiet).returncode != 0:
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)], **quiet)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _client_cmd(cmd: list[str], disk: str, i: int, n: int) -> list[str]:
    return [a.replace("{disk}", disk).replace("{client}", str(i)).replace("{clients}", str(n))
            for a in cmd]


def run(ns: argparse.Namespace) -> dict:
    """The whole run; SIGTERM and SIGHUP, like ^C, undo what was set up."""
    with terminations_interrupt():
        return _run(ns)


def stripe_plugin() -> Path:
    return ionode.built_module("nbdkit-foresight-stripe-plugin.so",
                               "--ionodes: the striping plugin", "libnbd-dev")


def node_cache(ns: argparse.Namespace) -> int:
    """Each node's cache in bytes: --cache, or its share of it."""
    total = parse_size(ns.cache)
    return total if ns.per_node_cache else total // ns.ionodes


def _per_node(path: str | None, k: int, m: int) -> str | None:
    return path if path is None or m == 1 else f"{path}.{k}"


def _run(ns: argparse.Namespace) -> dict:
    cmd, mem = _check(ns)
    work = Path(tempfile.mkdtemp(prefix="foresight-cluster-"))
    m = ns.ionodes
    node_pids = [work / f"n{k}.pid" for k in range(m)]
    node_socks = [work / f"n{k}.sock" for k in range(m)]
    mounts: list[tuple[Path, subprocess.Popen]] = []
    started: list[Path] = []   # pid files of the servers started: nodes, then views
    try:
        disk = Path(ns.disk) if ns.disk else work / "disk.img"
        if ns.disk is None:
            with open(disk, "wb") as f:
                f.truncate(parse_size(ns.size))
        for k in range(m):
            node = SimpleNamespace(disk=str(disk), socket=str(node_socks[k]), port=None,
                                   cache=str(node_cache(ns)), block=ns.block, policy=ns.policy,
                                   epoch=ns.epoch, trace=_per_node(ns.trace, k, m),
                                   stats=_per_node(ns.stats, k, m), pidfile=str(node_pids[k]),
                                   disk_delay=ns.disk_delay, foreground=False, action="start")
            try:
                ionode.main(node)
            except UsageError as e:
                raise UsageError(f"I/O node {k}: {e}" if m > 1 else str(e)) from None
            started.append(node_pids[k])
            _wait_pidfile(node_pids[k])
        for i in range(ns.clients):
            if m == 1:
                sock = node_socks[0]
            else:   # the client's view: a server of its own striping over the nodes
                sock = work / f"c{i}.sock"
                _stripe(sock, work / f"c{i}.view.pid", [
                    f"nbd+unix:///c{i}?socket={node_socks[k]}" for k in range(m)], ns.block)
                started.append(work / f"c{i}.view.pid")
            mnt = work / f"c{i}"
            _mount(mnt, _uri(i, sock), work / f"c{i}.fuse.pid", work / f"c{i}.fuse.log", mounts)
            if ns.client_readahead_kb is not None:
                _read_ahead(mnt, ns.client_readahead_kb)
        clients = _run_clients(cmd, mem, ns, work,
                               node_socks[0] if m == 1 else None)
    finally:
        for mnt, proc in mounts:
            _unmount(mnt, proc)
        for pidfile in reversed(started):
            try:
                ionode.main(SimpleNamespace(action="stop", pidfile=str(pidfile)))
            except UsageError as e:
                print(f"foresight: warning: {e}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
    nodes = []
    for k in range(m):
        last = None
        path = _per_node(ns.stats, k, m)
        if path:
            try:
                lines = Path(path).read_text().splitlines()
                last = json.loads(lines[-1]) if lines else None
            except (OSError, ValueError):
                last = None
        nodes.append(last)
    return {"clients": clients, "node": nodes[0], "nodes": nodes, "ionodes": m,
            "policy": ns.policy, "client_mem_bytes": mem, "node_cache_bytes": node_cache(ns),
            "command": cmd, "launcher": ns.launcher}


def _uri(i: int, sock: Path) -> str:
    """Client I's URI on the server at SOCK (its export name is the client id)."""
    return f"nbd+unix:///c{i}?socket={sock}"


def _stripe(sock: Path, pidfile: Path, nodes: list[str], block: str) -> None:
    """Start the server of one client's striped view of the nodes on SOCK."""
    cmd = ["nbdkit", "-U", str(sock), "-P", str(pidfile), str(stripe_plugin()),
           *(f"node={u}" for u in nodes), f"block={block}"]
    p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        raise HarnessError(f"the striped view could not start: "
                           f"{lines[-1] if lines else f'exit {p.returncode}'}")
    _wait_pidfile(pidfile)


def _wait_pidfile(pidfile: Path) -> None:
    """Until a server started in the background has written PIDFILE: nbdkit's first
    process exits before its daemon writes it, and `ionode stop` needs it."""
    for _ in range(200):
        try:
            if pidfile.read_text().strip():
                return
        except OSError:
            pass
        time.sleep(0.025)


def _client_env(i: int, n: int, work: Path, sock: Path | None) -> dict[str, str]:
    """What client I's program finds in its environment: its rank, its view of the disk,
    the server its prefetches go to (the node, or with several its striped view, SOCK
    None), where its runtime's statistics go."""
    view = str(work / f"c{i}" / FILE)
    server = sock if sock is not None else work / f"c{i}.sock"
    return {"FORESIGHT_CLIENT": str(i), "FORESIGHT_CLIENTS": str(n), "FORESIGHT_DISK": view,
            "FORESIGHT_NBD": _uri(i, server), "FORESIGHT_NBD_FILE": view,
            "FORESIGHT_STATS": str(work / f"c{i}.stats.json")}


def _result(i: int, work: Path, cap: Cap, code: int | None, wall: float | None,
            timed_out: bool) -> dict:
    """Client I's entry in the results; CODE None: it never ran (its launcher failed)."""
    stats = None
    try:
        stats = json.loads((work / f"c{i}.stats.json").read_text())
    except (OSError, ValueError):
        pass

    def text(name: str) -> str:
        try:   # undecodable bytes kept as surrogates: main() writes them back unchanged
            return (work / name).read_bytes().decode(errors="surrogateescape")
        except OSError:
            return ""

    oom = bool(cap.cgroup and cap.cgroup.oom_kills() > 0)
    return {
        "id": i, "wall_seconds": wall,
        "exit_code": None if code is None else code if code >= 0 else 128 - code,
        "signal": signal_name(-code) if code is not None and code < 0 else None,
        "oom_killed": oom, "timed_out": timed_out,
        "stdout": text(f"c{i}.out"), "stderr": text(f"c{i}.err"),
        "prefetches_to_node": (stats.get("global") or {}).get("remote_cache_requests")
        if stats else None,
        "cgroup": cap.describe()}


def _run_clients(cmd: list[str], mem: int, ns: argparse.Namespace, work: Path,
                 sock: Path | None) -> list[dict]:
    """Start every client at once, each in its own capped cgroup; wait for all."""
    if ns.launcher is not None:
        return _run_launched(cmd, mem, ns, work, sock)
    started: list[tuple[subprocess.Popen, Cap, float]] = []
    results: list[dict] = []
    try:
        for i in range(ns.clients):
            view = str(work / f"c{i}" / FILE)
            env = dict(os.environ, **_client_env(i, ns.clients, work, sock))
            cap = Cap(mem)
            argv = cap.prefix + _client_cmd(cmd, view, i, ns.clients)
            with open(work / f"c{i}.out", "w") as out, open(work / f"c{i}.err", "w") as err:
                try:
                    proc = subprocess.Popen(
                        argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                        preexec_fn=cap.cgroup.join_self if cap.cgroup else None)
                except OSError as e:
                    cap.close()
                    raise HarnessError(f"cannot run {cmd[0]!r}: {e.strerror}") from None
            started.append((proc, cap, time.perf_counter()))
        walls: dict[int, float] = {}

        def wait(k: int) -> None:
            started[k][0].wait()
            walls[k] = time.perf_counter() - started[k][2]

        waiters = [threading.Thread(target=wait, args=(k,)) for k in range(len(started))]
        for t in waiters:
            t.start()
        deadline = None if ns.timeout is None else time.monotonic() + ns.timeout
        late: set[int] = set()   # clients still running at the deadline
        for t in waiters:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                now_late = {k for k, (proc, _, _) in enumerate(started) if proc.poll() is None}
                late |= now_late
                for k in now_late:
                    started[k][0].kill()
                t.join()
        for i, (proc, cap, _) in enumerate(started):
            results.append(_result(i, work, cap, proc.returncode, walls.get(i), i in late))
    finally:
        for proc, cap, _ in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            cap.close()
    return results


def _run_launched(cmd: list[str], mem: int, ns: argparse.Namespace, work: Path,
                  sock: Path | None) -> list[dict]:
    """The clients as the ranks of one launcher command (`CMD -n N`): each rank runs
    foresight.sharedcache.rank, which finds its client in the plan written here by the
    rank the launcher gives it and runs the program in that client's cgroup."""
    caps: list[Cap] = []
    try:
        plan = []
        for i in range(ns.clients):
            cap = Cap(mem)
            caps.append(cap)
            view = str(work / f"c{i}" / FILE)
            plan.append({"argv": cap.prefix + _client_cmd(cmd, view, i, ns.clients),
                         "env": _client_env(i, ns.clients, work, sock),
                         "procs_file": cap.cgroup.procs_file if cap.cgroup else None,
                         "stdout": str(work / f"c{i}.out"), "stderr": str(work / f"c{i}.err"),
                         "result": str(work / f"c{i}.result.json")})
        (work / "plan.json").write_text(json.dumps({"clients": plan}))
        argv = [*shlex.split(ns.launcher), "-n", str(ns.clients), sys.executable, "-m",
                "foresight.sharedcache.rank", str(work / "plan.json")]
        with open(work / "launcher.log", "wb") as log:
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as e:
                raise HarnessError(f"cannot run the launcher {argv[0]!r}: {e.strerror}") from None
        timed_out = False
        try:
            proc.wait(timeout=ns.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        finally:
            if proc.poll() is None:   # an interrupt: the launcher and its ranks go too
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        results = []
        for i, cap in enumerate(caps):
            started = False
            try:
                r = json.loads((work / f"c{i}.result.json").read_text())
                code, wall, started = r["returncode"], r["wall_seconds"], True
            except (OSError, ValueError, KeyError):
                code, wall = None, None
            res = _result(i, work, cap, code, wall, timed_out and code is None)
            # Started, no exit status: the launcher killed the rank with its program
            # (Hydra, when another rank aborts or crashes); not a client that never ran.
            res["killed_by_launcher"] = started and code is None and not timed_out
            results.append(res)
        if not timed_out and not any(r["exit_code"] is not None or r["killed_by_launcher"]
                                     for r in results):
            lines = (work / "launcher.log").read_bytes().decode(errors="replace").strip()
            last = lines.splitlines()[-1] if lines else f"exit {proc.returncode}, no message"
            raise HarnessError(f"the launcher {ns.launcher!r} ran no client: {last}")
        for r in results:   # the launcher's status stands for the ranks that have none
            r["launcher_exit_code"] = proc.returncode
        return results
    finally:
        for cap in caps:
            cap.close()


def main(ns: argparse.Namespace) -> int:
    res = run(ns)
    sys.stdout.flush()
    for c in res["clients"]:
        sys.stdout.buffer.write(c["stdout"].encode(errors="surrogateescape"))
    sys.stdout.buffer.flush()
    for c in res["clients"]:
        if c["stderr"]:
            sys.stderr.buffer.write(c["stderr"].encode(errors="surrogateescape"))
            if not c["stderr"].endswith("\n"):
                sys.stderr.buffer.write(b"\n")
    sys.stderr.buffer.flush()
    print(f"foresight cluster: {len(res['clients'])} clients with "
          f"{format_size(res['client_mem_bytes'])} of memory each, "
          + ("one I/O node" if res["ionodes"] == 1 else f"{res['ionodes']} I/O nodes striped")
          + f" ({format_size(res['node_cache_bytes'])} cache"
          + ("" if res["ionodes"] == 1 else " each") + f", policy {res['policy']})",
          file=sys.stderr)
    for c in res["clients"]:
        how = ("killed by the OOM killer" if c["oom_killed"] else "timed out" if c["timed_out"]
               else f"killed by {c['signal']}" if c["signal"]
               else "killed by its launcher (no exit status)" if c.get("killed_by_launcher")
               else "never ran (its launcher did not start it)" if c["exit_code"] is None
               else f"exit {c['exit_code']}")
        wall = "" if c["wall_seconds"] is None else f"{c['wall_seconds']:.3f} s, "
        sent = c["prefetches_to_node"]
        print(f"  client {c['id']}: {wall}{how}"
              + ("" if sent is None else f", {sent} prefetches sent to the node"),
              file=sys.stderr)
    if ns.json:
        Path(ns.json).write_text(json.dumps(res, indent=1) + "\n")
    def code(c: dict) -> int:   # a rank with no status: the launcher's, if it failed
        if c["exit_code"] is not None:
            return c["exit_code"]
        lc = c.get("launcher_exit_code")
        return lc if lc is not None and lc > 0 else 1

    codes = [code(c) for c in res["clients"]]
    return next((c for c in codes if c != 0), 0)
