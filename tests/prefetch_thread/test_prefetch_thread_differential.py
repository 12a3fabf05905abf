"""Differential tests for `foresight cc --prefetch-thread` (issue 24): a prefetch thread
never changes what a program does.

Every program here (tests/prefetch_thread/*.c, each a trap the issue lists: the paper's
scoping example and Figures 2-3, index -> records, a file named on stdin, read after
write, descriptor reuse, short reads, failed opens, recursion, helpers and function
pointers, fork, signals, offsets > 4 GiB, the descriptor numbers a program gets, ...) is
built with plain `cc` (the reference, R), with `foresight cc --no-prefetch` (O) and with
`foresight cc --prefetch-thread` (P), each run in a directory of its own where it makes
its inputs.  Every run must match R's byte for byte: stdout, stderr, exit status and the
files it leaves.  P runs as it is, with FORESIGHT_PT=0 (no thread) and with
FORESIGHT_PT_FILES='*' (every file prefetched, the small ones too); R and P are also
built with ASan/UBSan and with TSan.  And no program goes without a thread silently:
either its thread starts or foresight cc says why not (the paper's own examples must
get one).

A program's header says how it runs: line 1 `/* trap: ... */`; then, optionally,
`/* inputs: ... */` (the file built by plain cc with -DMAKE_INPUTS is its own input
maker, run first in the same directory: the measured program never writes them, and
holds no code that does), `/* stdin: TEXT */` (standard input, `\\n` for newlines),
`/* args: A B ... */` (its arguments, split at spaces), `/* cflags: ... */` (more
compiler flags for every build of it), `/* exit: N */` (the exit status, default 0)
and `/* sanitizers: off (WHY) */` (not run under ASan/UBSan and TSan: they report the
thread's own memory errors, which the fault net otherwise contains).

The corpus's own checks (labelled, clean under -Werror, deterministic and independent
of its directory) need no foresight at all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

FORESIGHT = str(Path(sys.prefix) / "bin" / "foresight")
HERE = Path(__file__).resolve().parent
CORPUS = sorted(HERE.glob("*.c"))
WARNINGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
SANITIZERS = {
    "asan-ubsan": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g"],
    "tsan": ["-fsanitize=thread", "-g"],
}
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0", "UBSAN_OPTIONS": "print_stacktrace=1",
                 "TSAN_OPTIONS": "halt_on_error=1 exitcode=66 atexit_sleep_ms=0"}
RUN_TIMEOUT = 120   # seconds; every program runs in well under one without sanitizers


@dataclass(frozen=True)
class Program:
    src: Path
    trap: str
    inputs: bool      # made by the file built with -DMAKE_INPUTS
    stdin: bytes
    exit: int
    args: tuple[str, ...] = ()
    sanitizers: bool = True
    cflags: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.src.stem


def program(src: Path) -> Program:
    """SRC with what its header comments say."""
    lines = src.read_text(encoding="utf-8").splitlines()
    meta: dict[str, str] = {}
    for line in lines[1:]:
        if not line.startswith("/* ") or ":" not in line:
            break
        key, _, value = line.removeprefix("/* ").removesuffix("*/").partition(":")
        meta[key.strip()] = value.strip()
    trap = lines[0].removeprefix("/* trap:").removesuffix("*/").strip()
    stdin = meta.get("stdin", "").replace("\\n", "\n").encode()
    return Program(src, trap if lines[0].startswith("/* trap:") else "", "inputs" in meta,
                   stdin, int(meta.get("exit", "0")), tuple(meta.get("args", "").split()),
                   not meta.get("sanitizers", "").startswith("off"),
                   tuple(meta.get("cflags", "").split()))


PROGRAMS = [program(s) for s in CORPUS]
IDS = [p.name for p in PROGRAMS]


def compile_with(cmd: list[str], p: Program, exe: Path, flags: list[str]) -> str:
    """Build P.SRC into EXE; the compiler's messages.  The driver compiles a file whose
    transformed text does not build as it was written, which would hide a slicer or
    rewriter bug from the comparison: that fails here too."""
    r = subprocess.run([*cmd, *WARNINGS, *p.cflags, *flags, str(p.src), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"`{' '.join(cmd)}` {p.src.name} failed:\n{r.stderr}"
    assert "the transformed code did not compile" not in r.stderr, r.stderr
    return r.stderr


@dataclass(frozen=True)
class Behaviour:
    exit: int
    stdout: bytes
    stderr: bytes
    files: dict[str, tuple[str, bytes]]


def files_left(d: Path) -> dict[str, tuple[str, bytes]]:
    """Every file a run left in D: a symbolic link's target, a file's bytes."""
    out = {}
    for f in sorted(d.rglob("*")):
        rel = str(f.relative_to(d))
        if f.is_symlink():
            out[rel] = ("link", os.readlink(f).encode())
        elif f.is_file():
            out[rel] = ("file", f.read_bytes())
    return out


def input_maker(cc: str, p: Program, d: Path) -> Path | None:
    """The program's input maker (`/* inputs: */`): the file built with -DMAKE_INPUTS."""
    if not p.inputs:
        return None
    exe = d / f"{p.name}-inputs"
    r = subprocess.run([cc, "-std=c11", "-O2", "-w", "-DMAKE_INPUTS", str(p.src), "-o",
                        str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, f"{p.name} -DMAKE_INPUTS:\n{r.stderr}"
    return exe


def behave(exe: Path, p: Program, d: Path, maker: Path | None,
           env: dict[str, str] | None = None) -> Behaviour:
    """Run EXE in a fresh directory D, after MAKER has made its inputs there; what it
    did."""
    d.mkdir()
    e = {k: v for k, v in os.environ.items() if not k.startswith("FORESIGHT_PT")}
    e.update(SANITIZER_ENV)
    e.update(env or {})
    if maker is not None:
        s = subprocess.run([str(maker)], cwd=d, capture_output=True, timeout=RUN_TIMEOUT)
        assert s.returncode == 0, f"{p.name}: making its inputs failed: {s.stderr!r}"
    r = subprocess.run([str(exe), *p.args], cwd=d, input=p.stdin, capture_output=True,
                       timeout=RUN_TIMEOUT, env=e)
    return Behaviour(r.returncode, r.stdout, r.stderr, files_left(d))


def describe(b: Behaviour) -> str:
    return (f"exit {b.exit}\nstdout {b.stdout[-600:]!r}\nstderr {b.stderr[-600:]!r}\n"
            f"files {sorted(b.files)}")


def assert_same(label: str, ref: Behaviour, got: Behaviour) -> None:
    differing = sorted(k for k in ref.files.keys() | got.files.keys()
                       if ref.files.get(k) != got.files.get(k))
    assert got == ref, (f"{label} differs from plain cc\n--- cc:\n{describe(ref)}\n"
                        f"--- {label}:\n{describe(got)}\nfiles differing: {differing}")


# ---- the corpus itself (no foresight needed) ----

def test_corpus_is_present_and_labelled():
    assert len(PROGRAMS) >= 20
    for p in PROGRAMS:
        assert p.trap, f"{p.src.name}: line 1 must be `/* trap: what it tests */`"
        text = p.src.read_text(encoding="utf-8")
        assert "foresight_" not in text and "#pragma" not in text, p.src.name


@pytest.mark.parametrize("p", PROGRAMS, ids=IDS)
def test_corpus_program_is_deterministic(cc, tmp_path, p):
    # The reference itself: the same behaviour twice, in two directories (no path, time
    # or address in what it prints or writes), and the exit status its header says.
    exe = tmp_path / "R"
    compile_with([cc], p, exe, [])
    maker = input_maker(cc, p, tmp_path)
    first = behave(exe, p, tmp_path / "one", maker)
    second = behave(exe, p, tmp_path / "two", maker)
    assert first.exit == p.exit, describe(first)
    assert first.stdout, f"{p.name} printed nothing"
    assert_same("a second run", first, second)


def test_a_difference_is_caught(tmp_path):
    # The comparison sees a file's bytes, not only stdout.
    d = tmp_path / "d"
    d.mkdir()
    (d / "out").write_bytes(b"a")
    one = Behaviour(0, b"x", b"", files_left(d))
    (d / "out").write_bytes(b"b")
    with pytest.raises(AssertionError, match="files differing: \\['out'\\]"):
        assert_same("changed", one, Behaviour(0, b"x", b"", files_left(d)))


# ---- the prefetch thread ----

@dataclass(frozen=True)
class Builds:
    """One program built without sanitizers: R (plain cc), O, P, P's messages and the
    input maker, or why one of them did not build."""
    r: Path
    o: Path
    p: Path
    maker: Path | None
    p_messages: str
    error: str | None


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> dict[str, Builds]:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = {}
    for p in PROGRAMS:
        d = tmp_path_factory.mktemp(p.name)
        msgs, error, maker = "", None, None
        try:
            maker = input_maker(cc, p, d)
            compile_with([cc], p, d / "R", [])
            compile_with([FORESIGHT, "cc", "--no-prefetch"], p, d / "O", [])
            msgs = compile_with([FORESIGHT, "cc", "--prefetch-thread"], p, d / "P", [])
        except AssertionError as e:
            error = str(e)
        out[p.name] = Builds(d / "R", d / "O", d / "P", maker, msgs, error)
    return out


def p_runs(p_exe: Path) -> list[tuple[str, Path, dict[str, str]]]:
    return [("--prefetch-thread", p_exe, {}),
            ("--prefetch-thread, FORESIGHT_PT=0", p_exe, {"FORESIGHT_PT": "0"}),
            ("--prefetch-thread, FORESIGHT_PT_FILES=*", p_exe, {"FORESIGHT_PT_FILES": "*"})]


@pytest.mark.parametrize("p", PROGRAMS, ids=IDS)
def test_prefetch_thread_does_not_change_behaviour(plain, tmp_path, p):
    b = plain[p.name]
    assert b.error is None, b.error
    ref = behave(b.r, p, tmp_path / "r", b.maker)
    assert ref.exit == p.exit, describe(ref)
    for k, (label, exe, env) in enumerate([*p_runs(b.p), ("--no-prefetch", b.o, {})]):
        assert_same(label, ref, behave(exe, p, tmp_path / f"run{k}", b.maker, env))


@pytest.mark.parametrize("sanitize", list(SANITIZERS))
@pytest.mark.parametrize("p", PROGRAMS, ids=IDS)
def test_prefetch_thread_under_sanitizers(cc, tmp_path, p, sanitize):
    if not p.sanitizers:
        pytest.skip(f"{p.name}: its thread's own memory errors are the sanitizers' reports")
    flags = SANITIZERS[sanitize]
    ref_exe, p_exe = tmp_path / "R", tmp_path / "P"
    compile_with([cc], p, ref_exe, flags)
    compile_with([FORESIGHT, "cc", "--prefetch-thread"], p, p_exe, flags)
    maker = input_maker(cc, p, tmp_path)
    ref = behave(ref_exe, p, tmp_path / "r", maker)
    assert ref.exit == p.exit, describe(ref)
    for k, (label, exe, env) in enumerate(p_runs(p_exe)):
        assert_same(f"{label} ({sanitize})", ref, behave(exe, p, tmp_path / f"run{k}",
                                                         maker, env))


# The paper's own examples must get a thread, and so must programs taking their options
# with getopt, cutting their input with strtok or checking their reads with macros; any
# program may be refused one, but only
# out loud (`file:line: foresight: no prefetch thread: <reason>` from foresight cc).
MUST_HAVE_A_THREAD = ("scope_shadow", "fig2_backward", "fig3_config_index", "getopt_options",
                      "config_strtok", "macro_checks", "stdin_getline", "stdin_variable",
                      "stdin_fd", "macro_io")


def test_every_program_gets_a_thread_or_a_reason(plain, tmp_path):
    silent = []
    for p in PROGRAMS:
        b = plain[p.name]
        if b.error is not None:   # the differential test above says why
            continue
        stats = tmp_path / f"{p.name}.stats.json"
        behave(b.p, p, tmp_path / p.name, b.maker, {"FORESIGHT_STATS": str(stats)})
        started = json.loads(stats.read_text())["global"].get("pt_started")
        refused = "no prefetch thread" in b.p_messages
        assert started or p.name not in MUST_HAVE_A_THREAD, (
            f"{p.name}: no prefetch thread started\n{b.p_messages}")
        if not started and not refused:
            silent.append(p.name)
    assert not silent, f"no thread and no reason given by foresight cc: {silent}"


# Programs whose thread must predict every covered call right: its calls, none of them
# mispredicted.  getopt_options names its file first, then options: GNU getopt moves the
# name to the end of the program's argv, and the thread's argv must follow (else it opens
# `2`, an option's value).  config_strtok cuts each line of its run list with strtok_r and
# strtok while the program's own strtok is half-way through another string.  macro_checks
# makes its reads inside error-checking macros (the thread makes them alone).
# stdin_getline takes its requests from getline and fread of standard input, stdin_variable
# through a FILE * that holds stdin, stdin_fd by read() of a descriptor variable holding 0.
# readv_preadv reads records with readv (moving the offset its lseek reports) and preadv
# (20 + 85 calls, predicted from the lengths in the thread's own iovecs).  raw_index
# reads back an index it has just written: each lead read of it waits for the program's
# own read (read after write), 40 of them, each followed by its record's prediction.
# created_late pauses before it creates each of its two indexes, so the thread opens them
# first, finds nothing and must still read them once the program has written them: one
# through the descriptor that wrote it, one written, closed and opened again read-only
# (20 + 20 + 21 + 20 calls).  macro_io reads through macros whose own text makes the call
# (pread, read, fread; one macro through another): 86 + 55 + 20 + 47 calls.  index_fread
# reads 20,000 records by fseek + fread in the order of an index array its loop also walks
# (a loop nest the hints would otherwise copy without the ticks).
# time_checks picks its first record and checks a deadline before each read by
# gettimeofday and clock_gettime, whose results the thread takes from the channel.
# getopt_flags and getopt_flags_local read backward when a getopt_long flag option (a
# file-scope table, main's own table) says so: the thread sets its own flags.
FOLLOWS = {"getopt_options": 256, "config_strtok": 242, "macro_checks": 245,
           "stdin_getline": 21, "stdin_variable": 22, "stdin_fd": 17, "readv_preadv": 105,
           "raw_index": 80, "created_late": 81, "macro_io": 208, "index_fread": 20000,
           "time_checks": 61,
           "getopt_flags": 214, "getopt_flags_local": 120}


@pytest.mark.parametrize("incore", ["skip", "hint"])
@pytest.mark.parametrize("name", sorted(FOLLOWS))
def test_the_thread_predicts_every_call(plain, tmp_path, name, incore):
    # incore: which version of a hinted loop nest runs with the data in memory, the
    # unhinted copy (skip, what users get) or the hinted one (the suite's default, which
    # hid nests copied without the program's ticks).
    p = next(q for q in PROGRAMS if q.name == name)
    b = plain[p.name]
    assert b.error is None, b.error
    stats = tmp_path / "stats.json"
    # (the exit waits for the thread: these programs take milliseconds, over before the
    # thread has run at all when the machine is busy)
    behave(b.p, p, tmp_path / "run", b.maker,
           {"FORESIGHT_STATS": str(stats), "FORESIGHT_PT_FILES": "*", "FORESIGHT_PT_DRAIN": "1",
            "FORESIGHT_INCORE": incore})
    g = json.loads(stats.read_text())["global"]
    assert g["pt_started"] == 1 and g["pt_stopped"] is None, g
    assert g["pt_calls"] == FOLLOWS[name] and g["pt_mispredicts"] == 0, g


def test_a_thread_that_overruns_its_own_stack_is_stopped(plain, tmp_path):
    # thread_overflow: the thread may not read the name the program reads back (fgets) from
    # a file it has just written, and its copy of the name loop runs up its own stack (the
    # program's stops at the name's length).  The thread must stop at its fault and
    # the program go on as without it.  (An earlier form of this program, whose loop ran
    # until it met a newline on the stack, killed the process in 5 runs of 5: the stop
    # came back through the frames the loop had overwritten, and through glibc's thread
    # block at the stack's top; pt_thread.c now ends the thread from static state, below
    # a guard page under its first frame.)
    p = next(q for q in PROGRAMS if q.name == "thread_overflow")
    b = plain[p.name]
    assert b.error is None, b.error
    stats = tmp_path / "stats.json"
    ref = behave(b.r, p, tmp_path / "r", b.maker)
    got = behave(b.p, p, tmp_path / "run", b.maker,
                 {"FORESIGHT_STATS": str(stats), "FORESIGHT_PT_DRAIN": "1"})
    assert_same("--prefetch-thread", ref, got)
    g = json.loads(stats.read_text())["global"]
    assert g["pt_started"] == 1 and (g["pt_stopped"] or "").startswith("fault (SIGSEGV"), g


def test_readv_of_standard_input_fails_on_the_thread(plain, tmp_path):
    # stdin_readv: the thread's copy of readv(0, ...) fails at once (a pread of descriptor
    # 0, which the thread never opened); it never waits on the channel, which carries the
    # bytes of read(0, ...) only, and the program sends none for readv.
    p = next(q for q in PROGRAMS if q.name == "stdin_readv")
    b = plain[p.name]
    assert b.error is None, b.error
    stats = tmp_path / "stats.json"
    behave(b.p, p, tmp_path / "run", b.maker,
           {"FORESIGHT_STATS": str(stats), "FORESIGHT_PT_DRAIN": "1"})
    g = json.loads(stats.read_text())["global"]
    assert g["pt_started"] == 1 and g["pt_stopped"] is None, g
    assert g["pt_calls"] == 1 and g["pt_received"] == 0 and g["pt_sync_waits"] == 0, g
