#!/usr/bin/env bash
# Install the Debian packages Foresight needs, only those missing, only as root.
# Called by `make setup`; safe to run again.
set -euo pipefail
need=()
command -v cc >/dev/null || need+=(build-essential)
command -v cmake >/dev/null || need+=(cmake)
command -v pkg-config >/dev/null || need+=(pkg-config)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
# Csmith generates the random programs of tests/test_differential.py
command -v csmith >/dev/null || need+=(csmith)
[ -e /usr/include/csmith/csmith.h ] || need+=(libcsmith-dev)
# fio measures the disk for the physical bound of `foresight bench nas` and `compiler`
command -v fio >/dev/null || need+=(fio)
# the shared I/O-node cache's server (paper 3): nbdkit and its filter headers, libnbd for
# its test clients, fuse3 for nbdfuse mounts
command -v nbdkit >/dev/null || need+=(nbdkit)
[ -e /usr/include/nbdkit-filter.h ] || need+=(nbdkit-plugin-dev)
[ -e /usr/include/libnbd.h ] || need+=(libnbd-dev)
command -v nbdfuse >/dev/null || need+=(libnbd-bin)
command -v fusermount3 >/dev/null || need+=(fuse3)
# MPICH: `foresight cluster run --launcher mpiexec` runs an MPI program's ranks as the
# I/O node's clients (its test builds one with mpicc)
command -v mpiexec >/dev/null || need+=(mpich)
command -v mpicc >/dev/null || need+=(libmpich-dev)
# liburing: the prefetch thread's requests through io_uring (FORESIGHT_PT_ISSUE=uring)
[ -e /usr/include/liburing.h ] || need+=(liburing-dev)
# clang's own headers (stdatomic.h, stddef.h) for the front end's libclang, which the
# libclang wheel lacks; gcc's <stdatomic.h> is not parseable by clang
compgen -G '/usr/lib/llvm-*/lib/clang/*/include/stdatomic.h' >/dev/null || need+=(libclang-common-16-dev)
# clang 16 and LLVM's OpenMP runtime: `foresight cc --trace-mem` builds with clang's
# -fsanitize-coverage=trace-loads,trace-stores (gcc has none), its OpenMP is libomp (whose
# tools interface tells the recorder each thread and parallel region)
command -v clang-16 >/dev/null || need+=(clang-16)
[ -e /usr/lib/llvm-16/lib/libomp.so ] || need+=(libomp-16-dev)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "foresight setup: missing Debian packages: ${need[*]} (run as root or install them)" >&2
  exit 1
fi
echo "foresight setup: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}"
