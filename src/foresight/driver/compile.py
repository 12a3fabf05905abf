"""Running the underlying compiler ($FORESIGHT_CC, default `cc`) on transformed sources.

The transformed text is written under the source's own base name in a private temporary
directory and compiled from there, one translation unit per invocation (so each gets its
own `-iquote <dir of the source>`), straight to the output the user asked for.  When
linking, the objects go to the temporary directory and one final cc command links them in
the user's order with the other inputs and the runtime.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from foresight.driver.args import DEPENDENCY_FLAGS, DEPENDENCY_VALUE, CommandLine, Input
from foresight.errors import CompilerError

_ACTIVE = "FORESIGHT_CC_ACTIVE"


def underlying() -> list[str]:
    words = shlex.split(os.environ.get("FORESIGHT_CC", "") or "cc")
    if os.environ.get(_ACTIVE):
        raise CompilerError("FORESIGHT_CC runs foresight cc again; point it at "
                            "the real compiler (e.g. FORESIGHT_CC=gcc)")
    return words


def run(cmd: list[str]) -> int:
    env = {**os.environ, _ACTIVE: "1"}
    try:
        rc = subprocess.call(cmd, env=env)
    except FileNotFoundError as e:
        raise CompilerError(f"cannot run the underlying compiler {cmd[0]!r} "
                            "(set FORESIGHT_CC)") from e
    return rc if rc >= 0 else 128 - rc


def run_captured(cmd: list[str]) -> tuple[int, str]:
    """Run with stderr held back (stdout passes through); returns (status, stderr)."""
    env = {**os.environ, _ACTIVE: "1"}
    try:
        p = subprocess.run(cmd, env=env, stderr=subprocess.PIPE, text=True,
                           errors="surrogateescape")
    except FileNotFoundError as e:
        raise CompilerError(f"cannot run the underlying compiler {cmd[0]!r} "
                            "(set FORESIGHT_CC)") from e
    return (p.returncode if p.returncode >= 0 else 128 - p.returncode), p.stderr


def diagnostics_color(args: list[str]) -> list[str]:
    """Captured diagnostics keep their colours when the user's terminal would show them."""
    if any(a.startswith(("-fdiagnostics-color", "-fno-diagnostics-color", "-fcolor-diag",
                         "-fno-color-diag")) for a in args):
        return []
    return ["-fdiagnostics-color=always"] if sys.stderr.isatty() else []


def runtime_cflags() -> list[str]:
    from foresight.config import flags

    return shlex.split(flags(cflags=True, libs=False))


def runtime_libs(args: list[str]) -> list[str]:
    """The runtime's link flags, except for a relocatable link (`-r`: objects, not a program)."""
    from foresight.config import flags

    if "-r" in args or "-Wl,-r" in args:
        return []
    return shlex.split(flags(cflags=False, libs=True))


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


def default_output(cl: CommandLine, inp: Input) -> str:
    """Where cc puts the output of one translation unit in -c / -S mode."""
    if cl.output is not None:
        return cl.output
    return inp.stem + (".s" if cl.mode == "-S" else ".o")


def dependency_args(cl: CommandLine, inp: Input, output: str) -> tuple[list[str], str | None]:
    """-MF/-MT naming the .d file and target as cc would have (for a linked program, the
    object is a temporary file whose name must not appear).  Returns (args, .d path)."""
    if not cl.dep_gen:
        return [], None
    if cl.mode == "link":
        # gcc: `cc -MD x.c -o prog` writes prog.d with target prog; without -o, a-x.d, x.o.
        if cl.output is not None:
            base = cl.output.rsplit(".", 1)[0] if "." in Path(cl.output).name[1:] \
                else cl.output
            dep, target = base + ".d", cl.output
        else:
            dep, target = f"a-{inp.stem}.d", inp.stem + ".o"
    else:
        out = Path(output)
        dep = str(out.with_suffix(".d")) if out.suffix else output + ".d"
        target = output
    if cl.dep_file is not None:
        dep = cl.dep_file
    extra = [] if cl.dep_file is not None else ["-MF", dep]
    if not cl.dep_targets:
        extra += ["-MT", target.replace("$", "$$")]
    return extra, dep


def fix_dependency_file(dep: str | None, tmp_src: Path, original: str) -> None:
    """The .d file must name the user's source, never the temporary copy."""
    if dep is None:
        return
    p = Path(dep)
    try:
        text = p.read_text(errors="surrogateescape")
    except OSError:
        return
    escaped = str(tmp_src).replace(" ", "\\ ")
    fixed = text.replace(escaped, original.replace(" ", "\\ ")).replace(str(tmp_src), original)
    if fixed != text:
        p.write_text(fixed, errors="surrogateescape")


def remove(path: str | None) -> None:
    if path is None or path == "-":
        return
    try:
        p = Path(path)
        if p.is_file():
            p.unlink()
    except OSError as e:
        print(f"warning: cannot remove {path}: {e.strerror}", file=sys.stderr)
