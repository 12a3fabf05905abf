"""`foresight config`: a hand-written program builds with the flags and runs without
LD_LIBRARY_PATH; the same source works linked without the runtime."""

import os
import subprocess

import pytest

from foresight import config
from foresight.cli import main

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <foresight.h>
int main(void) {
    size_t n = 1 << 20;
    long *a = malloc(n * sizeof *a), sum = 0;
    for (size_t i = 0; i < n; i++) a[i] = (long)i;
    for (size_t i = 0; i < n; i++) {
        foresight_prefetch(&a[i + 512 < n ? i + 512 : i], sizeof *a);
        sum += a[i];
    }
    foresight_release(a, n * sizeof *a);
    printf("%ld %d\n", sum, foresight_active());
    return 0;
}
"""


def _build(cc, tmp_path, flags):
    src = tmp_path / "p.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "p"
    subprocess.run([cc, "-O2", str(src), "-o", str(exe), *flags.split()], check=True)
    return exe


def test_flags_build_a_runnable_program(cc, tmp_path):
    exe = _build(cc, tmp_path, config.flags(cflags=True, libs=True))
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=True)
    n = 1 << 20
    assert out.stdout.split() == [str(n * (n - 1) // 2), "1"]


def test_as_needed_linking_keeps_the_runtime(cc, tmp_path):
    """Weak-only references must not let --as-needed drop the library."""
    exe = _build(cc, tmp_path, "-Wl,--as-needed " + config.flags(cflags=True, libs=True))
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "1"


def test_without_the_library_hints_are_no_ops(cc, tmp_path):
    exe = _build(cc, tmp_path, config.flags(cflags=True, libs=False))
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "0"


def test_disable_turns_hints_off(cc, tmp_path):
    exe = _build(cc, tmp_path, config.flags(cflags=True, libs=True))
    env = dict(os.environ, FORESIGHT_DISABLE="1")
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split()[1] == "0"


def test_bad_environment_value_gets_one_message_and_the_default(cc, tmp_path):
    exe = _build(cc, tmp_path, config.flags(cflags=True, libs=True))
    env = dict(os.environ, FORESIGHT_WORKERS="lots", FORESIGHT_STATS="1")
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=True)
    assert out.stderr.count("FORESIGHT_WORKERS=lots") == 1
    cpus = len(os.sched_getaffinity(0))
    default = 1 if cpus <= 2 else min(2, cpus - 1)
    assert f"workers={default} " in out.stderr  # the statistics table shows the default in use
    assert out.stdout.split()[1] == "1"


@pytest.mark.parametrize("env, shown", [
    ({"FORESIGHT_INLINE": "sometimes"}, "inline=none "),
    ({"FORESIGHT_INLINE": "anon"}, "inline=anon "),
    # MADV_POPULATE_READ waits for the reads, so it is never made by the program's thread.
    ({"FORESIGHT_INLINE": "all", "FORESIGHT_METHOD": "populate"}, "inline=none "),
])
def test_inline_setting(cc, tmp_path, env, shown):
    exe = _build(cc, tmp_path, config.flags(cflags=True, libs=True))
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, FORESIGHT_STATS="1", **env))
    assert shown in out.stderr
    assert out.stderr.count("FORESIGHT_INLINE=") == (env["FORESIGHT_INLINE"] == "sometimes")
    assert out.stdout.split()[1] == "1"


def test_pkg_config_file_is_installed():
    from foresight import paths

    pc = paths.lib_dir() / "pkgconfig" / "foresight.pc"
    assert "-lforesight" in pc.read_text()


def test_cli_prints_flags(capsys):
    assert main(["config", "--libs"]) == 0
    assert "-Wl,-rpath," in capsys.readouterr().out


OLD_ABI = r"""
#include <stdio.h>
#include <stdint.h>
/* What an object built against an older header references: unversioned names. */
extern uint64_t *const *foresight__dir __attribute__((weak));
void foresight__prefetch_slow(void *site, const void *addr, unsigned long bytes)
    __attribute__((weak));
int main(void) {
    printf("%d %d\n", &foresight__dir != NULL, foresight__prefetch_slow != NULL);
    return 0;
}
"""


def test_an_object_built_for_another_abi_gets_no_op_hints(cc, tmp_path):
    # The library's symbols carry the ABI number, so an object whose site layout differs
    # resolves none of them and its hints become no-ops instead of writing past its sites;
    # the current header's names do resolve.
    src = tmp_path / "old.c"
    src.write_text(OLD_ABI)
    exe = tmp_path / "old"
    subprocess.run([cc, "-O2", str(src), "-o", str(exe),
                    *config.flags(cflags=True, libs=True).split()], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "0"]
    current = _build(cc, tmp_path, config.flags(cflags=True, libs=True))
    out = subprocess.run([str(current)], capture_output=True, text=True, check=True)
    assert out.stdout.split()[1] == "1"


@pytest.mark.parametrize("value, shown", [("auto", "release=auto "),
                                          ("eager", "release=adaptive ")])
def test_release_setting(cc, tmp_path, value, shown):
    exe = _build(cc, tmp_path, config.flags(cflags=True, libs=True))
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, FORESIGHT_STATS="1", FORESIGHT_RELEASE=value))
    assert shown in out.stderr
    assert out.stderr.count("FORESIGHT_RELEASE=") == (value == "eager")
    assert out.stdout.split()[1] == "1"
