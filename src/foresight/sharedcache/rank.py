"""One client of `foresight cluster run --launcher CMD`, started by the launcher (mpiexec,
mpirun, srun) as one of its ranks: python -m foresight.sharedcache.rank PLAN.

The launcher says which rank this is (PMI_RANK under MPICH's Hydra,
OMPI_COMM_WORLD_RANK under Open MPI, PMIX_RANK, SLURM_PROCID); the harness wrote in
PLAN, per client, the program's arguments, its environment (its view of the disk, its
rank), its cgroup and where its output and result go.  The program runs as this
process's child, moved into the client's cgroup before it starts (this process, a
Python interpreter, stays out of the client's memory), with the launcher's descriptors
and environment (an MPI program finds its process manager through them) plus the
client's.  The result file holds its wall time and how it ended; the exit status is the
program's, so the launcher sees a failed rank as it would have.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time

RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")


def launcher_rank(env: dict[str, str]) -> int | None:
    """The rank the launcher gave this process, or None."""
    for name in RANK_VARIABLES:
        value = env.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def _fail(message: str) -> int:
    print(f"foresight cluster: {message}", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        return _fail("usage: python -m foresight.sharedcache.rank PLAN")
    try:
        with open(argv[0]) as f:
            plan = json.load(f)
    except (OSError, ValueError) as e:
        return _fail(f"cannot read the run's plan {argv[0]}: {e}")
    rank = launcher_rank(dict(os.environ))
    if rank is None:
        return _fail("the launcher gave this process no rank (none of "
                     + ", ".join(RANK_VARIABLES) + " is set)")
    clients = plan["clients"]
    if rank >= len(clients):
        return _fail(f"the launcher started rank {rank}, but the run has "
                     f"{len(clients)} clients (--clients)")
    me = clients[rank]
    procs = me.get("procs_file")

    def join() -> None:   # in the child, before exec; its stderr is the client's already
        if procs:
            try:
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))
            except OSError as e:
                # Raised here it would reach the wrapper as a bare SubprocessError
                # ("Exception occurred in preexec_fn"), a traceback and no result.
                os.write(2, f"foresight cluster: cannot move rank {rank} into {procs}: "
                         f"{e.strerror}\n".encode(errors="replace"))
                os._exit(126)

    def write_result(code: int | None, wall: float | None) -> None:
        tmp = me["result"] + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"rank": rank, "pid": os.getpid(), "wall_seconds": wall,
                       "returncode": code}, f)
        os.replace(tmp, me["result"])

    # The launcher's signals (a timeout, ^C) go to the program, not just to us: caught
    # from before the program starts (one arriving in between would end this process
    # and leave the program running), sent on once it has.
    proc: subprocess.Popen | None = None
    pending: list[int] = []

    def forward(sig: int, _frame) -> None:
        if proc is None:
            pending.append(sig)
        else:
            proc.send_signal(sig)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    # Started: a rank the launcher kills with its program (Hydra kills each rank's
    # process group when another aborts or crashes) is not one that never ran.
    write_result(None, None)
    env = dict(os.environ, **me["env"])
    start = time.perf_counter()
    with open(me["stdout"], "wb") as out, open(me["stderr"], "wb") as err:
        try:
            proc = subprocess.Popen(me["argv"], env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, close_fds=False,
                                    preexec_fn=join)
        except OSError as e:
            err.write(f"foresight cluster: cannot run {me['argv'][0]!r}: {e.strerror}\n"
                      .encode())
            code = 127
            wall = None
        else:
            for sig in pending:
                proc.send_signal(sig)
            code = proc.wait()
            wall = time.perf_counter() - start
    write_result(code, wall)
    if code < 0:
        # Ended by a signal: so does this process, so the launcher sees the rank as it
        # would have (Hydra ends the job at a rank's signal, but waits at an exit 139).
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (OSError, ValueError):
            pass
        try:
            signal.signal(-code, signal.SIG_DFL)   # SIGKILL has no handler to reset
        except (OSError, ValueError):
            pass
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
