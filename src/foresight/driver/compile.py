"""Running the underlying compiler ($FORESIGHT_CC, default `cc`) on transformed sources.

The transformed text is written under the source's own base name in a private temporary
directory and compiled from there, one translation unit per invocation (so each gets its
own `-iquote <dir of the source>`), straight to the output the user asked for.  When
linking, the objects go to the temporary directory and one final cc command links them in
the user's order with the other inputs and the runtime.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from foresight.driver import outputs, signals
from foresight.driver.args import DEPENDENCY_FLAGS, DEPENDENCY_VALUE, CommandLine, Input
from foresight.errors import CompilerError

_ACTIVE = "FORESIGHT_CC_ACTIVE"


def underlying_words() -> list[str]:
    """$FORESIGHT_CC as words (default `cc`)."""
    try:
        return shlex.split(os.environ.get("FORESIGHT_CC", "") or "cc")
    except ValueError as e:
        raise CompilerError(f"FORESIGHT_CC: {e}") from e


# `foresight cc --trace-mem`: clang instruments every load and store (it calls
# __sanitizer_cov_loadN/storeN, runtime/src/memtrace.c); inline-8bit-counters is the
# coverage mode that makes clang emit those calls at all.
TRACE_FLAGS = ["-fsanitize-coverage=inline-8bit-counters,trace-loads,trace-stores"]
_CLANGS = ("clang-20", "clang-19", "clang-18", "clang-17", "clang-16", "clang")


def _clang_major(exe: str) -> int:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    m = re.search(r"clang version (\d+)", out)
    return int(m.group(1)) if m else 0


def choose_trace_compiler() -> None:
    """--trace-mem: the underlying compiler becomes clang 16 or later unless FORESIGHT_CC
    names one (set in the environment, so that the front end asks the same compiler for
    its include paths and macros)."""
    if os.environ.get("FORESIGHT_CC"):
        return
    for name in _CLANGS:
        if shutil.which(name) and _clang_major(name) >= 16:
            os.environ["FORESIGHT_CC"] = name
            return
    raise CompilerError("--trace-mem builds with clang 16 or later (its "
                        "-fsanitize-coverage=trace-loads,trace-stores), which is not "
                        "installed: apt install clang-16 libomp-16-dev, or set FORESIGHT_CC")


def underlying() -> list[str]:
    """The compiler to run; refused when it would be foresight cc itself again."""
    words = underlying_words()
    if os.environ.get(_ACTIVE):
        raise CompilerError("FORESIGHT_CC runs foresight cc again; point it at "
                            "the real compiler (e.g. FORESIGHT_CC=gcc)")
    return words


def run(cmd: list[str], writes: list[str | None]) -> int:
    """Run cmd; `writes`: the files it writes, removed if a signal interrupts it."""
    return _spawn(cmd, writes, capture=False)[0]


def run_captured(cmd: list[str], writes: list[str | None]) -> tuple[int, str]:
    """Run with stderr held back (stdout passes through); returns (status, stderr)."""
    return _spawn(cmd, writes, capture=True)


def _spawn(cmd: list[str], writes: list[str | None], capture: bool) -> tuple[int, str]:
    """The child gets the signals the driver gets (signals.child); after a signal, what
    it wrote is removed (a file that existed before and was not touched is kept)."""
    env = {**os.environ, _ACTIVE: "1"}
    before = {w: _identity(w) for w in writes if w is not None and w != "-"}
    with signals.deferred():
        try:
            p = subprocess.Popen(cmd, env=env, text=True, errors="surrogateescape",
                                 stderr=subprocess.PIPE if capture else None,
                                 # the descriptors the user's shell or make passed on
                                 # (`-x c <(gen)`'s /dev/fd/63, a jobserver's pipe)
                                 # reach cc as they would run directly; the driver's own
                                 # are close-on-exec
                                 close_fds=False)
        except FileNotFoundError as e:
            raise CompilerError(f"cannot run the underlying compiler {cmd[0]!r} "
                                "(set FORESIGHT_CC)") from e
        with signals.child(p):
            _, err = p.communicate()
        if signals.pending():
            for path, was in before.items():
                if _identity(path) != was:
                    remove(path)
    rc = p.returncode
    return (rc if rc >= 0 else 128 - rc), err or ""


def _identity(path: str) -> tuple[int, int, int, int] | None:
    """Enough of a regular file's stat to tell whether a command wrote it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def diagnostics_color(args: list[str]) -> list[str]:
    """Captured diagnostics keep their colours when the user's terminal would show them."""
    if any(a.startswith(("-fdiagnostics-color", "-fno-diagnostics-color", "-fcolor-diag",
                         "-fno-color-diag")) for a in args):
        return []
    return ["-fdiagnostics-color=always"] if sys.stderr.isatty() else []


def runtime_cflags() -> list[str]:
    from foresight.config import flags

    return shlex.split(flags(cflags=True, libs=False))


def runtime_libs(args: list[str], trace_mem: bool = False) -> list[str]:
    """The runtime's link flags, except for a relocatable link (`-r`: objects, not a
    program) and a static one: the runtime is a shared library only (it interposes on
    libc), and the hints' calls into it are weak, so a `-static` program runs without
    it, its hints doing nothing; the user is told so."""
    from foresight.config import flags

    if "-r" in args or "-Wl,-r" in args:
        return []
    if any(a in ("-static", "--static", "-static-pie") for a in args):
        print("foresight cc: warning: -static: the runtime is a shared library, so the "
              "program is linked without it and its hints do nothing", file=sys.stderr)
        return []
    libs = shlex.split(flags(cflags=False, libs=True))
    if trace_mem:
        # linked whole: its access callbacks must win over the weak ones of clang's
        # sanitizer runtimes; libomp finds its OpenMP tool by the exported name
        from foresight import paths

        libs = ["-Wl,--whole-archive", str(paths.lib_dir() / "libforesight-memtrace.a"),
                "-Wl,--no-whole-archive", "-Wl,--export-dynamic-symbol=ompt_start_tool",
                *libs]
    return libs


def _is_dependency_arg(args: list[str], i: int) -> int:
    """How many arguments at i are dependency-file options (0: none)."""
    a = args[i]
    if a in DEPENDENCY_VALUE:
        return 2
    if a in DEPENDENCY_FLAGS or a.startswith(tuple(DEPENDENCY_VALUE)):
        return 1
    return 0


def common_flags(cl: CommandLine, keep_deps: bool,
                 inputs: dict[int, list[str]] | None = None) -> list[str]:
    """The user's flags without inputs, -o, -x, the mode and (unless keep_deps) -M options.
    With `inputs` (argument index -> replacement), each input is replaced in place, so
    libraries keep their position after the objects that need them (`a.c -lm`)."""
    from foresight.driver.args import TAKES_VALUE

    input_at = {inp.index for inp in cl.inputs}
    out: list[str] = []
    i, args = 0, cl.args
    while i < len(args):
        a = args[i]
        if i in input_at or a in ("-c", "-S"):
            if inputs is not None and i in inputs:
                out += inputs[i]
            i += 1
            continue
        if a in ("-o", "-x") or a.startswith(("-o", "-x")):
            i += 2 if a in ("-o", "-x") else 1
            continue
        n = _is_dependency_arg(args, i)
        if n:
            if keep_deps:
                out += args[i:i + n]
            i += n
            continue
        if a in TAKES_VALUE and i + 1 < len(args):
            out += args[i:i + 2]
            i += 2
            continue
        out.append(a)
        i += 1
    return out


# The linker's own options, which a link build's compile steps leave out: gcc ignores them
# there, clang warns "linker input unused" (an error under -Werror).
_LINK_VALUE = frozenset({"-l", "-L", "-Xlinker", "-T", "-u", "-z"})
_LINK_FLAGS = frozenset({"-static", "-static-pie", "-shared", "-rdynamic", "-nostdlib",
                         "-nodefaultlibs", "-nostartfiles", "-pie", "-no-pie", "-s",
                         "-static-libgcc", "-shared-libgcc"})


def compile_step_flags(flags: list[str]) -> list[str]:
    """FLAGS (common_flags' words) without the linker's options."""
    out: list[str] = []
    i = 0
    while i < len(flags):
        a = flags[i]
        if a in _LINK_VALUE:
            i += 2
            continue
        if a in _LINK_FLAGS or a.startswith(("-l", "-L", "-Wl,", "-fuse-ld=")):
            i += 1
            continue
        out.append(a)
        i += 1
    return out


_DEFINE = re.compile(r"^#define (\w+(?:\([^)]*\))?)(?: (.*))?$", re.M)
_NOT_FOR_MACROS = ("-D", "-U", "-I", "-include", "-imacros", "-iquote", "-isystem",
                   "-idirafter", "-MF", "-MT", "-MQ")


def _predefined(words: tuple[str, ...]) -> dict[str, str] | None:
    """The macros `WORDS -dM -E` defines (name, with a function-like macro's parameters,
    -> its text); None when the compiler does not say."""
    try:
        out = subprocess.run([*words, "-dM", "-E", "-x", "c", "/dev/null"],
                             capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if out.returncode != 0 or "__STDC__" not in out.stdout:
        return None
    return {m.group(1): m.group(2) or "" for m in _DEFINE.finditer(out.stdout)}


_PREDEFINED: dict[tuple[str, ...], dict[str, str] | None] = {}


def names_aux_files(compiler: list[str]) -> bool:
    """Whether COMPILER is GCC 11 or later, which takes -dumpdir and -dumpbase (clang
    16 does not)."""
    key = tuple(compiler)
    if key not in _PREDEFINED:
        _PREDEFINED[key] = _predefined(key)
    macros = _PREDEFINED[key] or {}
    try:
        return "__clang__" not in macros and int(macros.get("__GNUC__", "0")) >= 11
    except ValueError:
        return False


def flag_macros(flags: list[str]) -> list[str]:
    """-D and -U options that give libclang the macros the user's FLAGS (common_flags'
    words) make cc define or undefine beyond its defaults: -pthread's _REENTRANT,
    -mavx2's __AVX2__, -fno-math-errno's __NO_MATH_ERRNO__, -fsanitize=address's
    __SANITIZE_ADDRESS__...  libclang is not cc and is not given those flags, and code that
    tests the macros (`#ifdef _REENTRANT` around a `break`) must be read as cc compiles it.
    The user's own -D, -U and -include are passed to libclang as they are, and -std='s
    __STDC_* macros libclang sets itself."""
    kept: list[str] = []
    i = 0
    for_cc = compile_step_flags(flags)
    while i < len(for_cc):
        a = for_cc[i]
        if a in _NOT_FOR_MACROS:
            i += 2
            continue
        if not a.startswith(_NOT_FOR_MACROS) and not a.startswith(("-W", "-w", "-M")) \
                and a.startswith("-"):
            kept.append(a)
        i += 1
    if not kept:
        return []
    words = tuple(underlying_words())
    for key in (words, (*words, *kept)):
        if key not in _PREDEFINED:
            _PREDEFINED[key] = _predefined(key)
    base, user = _PREDEFINED[words], _PREDEFINED[(*words, *kept)]
    if base is None or user is None:
        return []
    out = []
    for name, text in sorted(user.items()):
        if base.get(name) != text and not name.startswith("__STDC"):
            out.append(f"-D{name}={text}")
    for name in sorted(base.keys() - user.keys()):
        if not name.startswith("__STDC"):
            out.append(f"-U{name.split('(')[0]}")
    return out


def dependency_args(cl: CommandLine, inp: Input, output: str) -> tuple[list[str], str | None]:
    """-MF/-MQ naming the .d file and target as cc would have (for a linked program, the
    object is a temporary file whose name must not appear).  Returns (args, .d path)."""
    named = outputs.dependency_file(cl, inp, output)
    if named is None:
        return [], None
    dep, target = named
    extra = [] if cl.dep_file is not None else ["-MF", dep]
    if not cl.dep_targets:
        extra += ["-MQ", target]   # quoted for make as cc quotes its own target
    return extra, dep


def make_quoted(path: str) -> str:
    """PATH as cc writes it into a dependency file (libcpp's mkdeps.cc `munge`): a space
    or tab after its backslashes doubled, then escaped; `#` escaped; `$` doubled."""
    out, slashes = [], 0
    for ch in path:
        if ch == "\\":
            slashes += 1
        else:
            if ch in " \t":
                out.append("\\" * slashes)
            if ch in " \t#":
                out.append("\\")
            elif ch == "$":
                out.append("$")
            slashes = 0
        out.append(ch)
    return "".join(out)


def fix_dependency_file(dep: str | None, tmp_src: Path, original: str) -> None:
    """The .d file must name the user's source, never the temporary copy."""
    if dep is None:
        return
    p = Path(dep)
    if not p.is_file():
        return  # -MF /dev/stdout: already written, nothing to read back
    try:
        text = p.read_bytes().decode(errors="surrogateescape")
    except OSError:
        return
    fixed = text.replace(make_quoted(str(tmp_src)), make_quoted(original))
    # The runtime's header, which the hints include and the source does not (-MP's empty
    # rule for it too): a dependency the user's build never had.
    from foresight.compiler.rewrite.splice import runtime_header

    header = re.escape(make_quoted(runtime_header().strip('"<>')))
    fixed = re.sub(rf"(?m)^\n?{header}:\n", "", fixed)
    fixed = re.sub(rf"[ \t]*\\\n[ \t]*{header}(?=\s)", "", fixed)
    fixed = re.sub(rf"[ \t]+{header}(?=\s)", "", fixed)
    if fixed != text:
        outputs.write_atomically(p, fixed.encode(errors="surrogateescape"),
                                 "the dependency file")


def remove(path: str | None) -> None:
    if path is None or path == "-":
        return
    try:
        p = Path(path)
        if p.is_file():
            p.unlink()
    except OSError as e:
        print(f"warning: cannot remove {path}: {e.strerror}", file=sys.stderr)
