"""`foresight cc ARGS...` / `foresight-cc ARGS...`: cc with prefetch and release hints.

Arguments the driver does not know pass through to $FORESIGHT_CC (default `cc`).  Each C
input is transformed (foresight.compiler.pipeline.transform, imported only when there is
one), compiled from a private temporary directory under its own base name, and the
result goes where cc would have put it; linking adds the runtime.  -E, -M/-MM and
non-C inputs go to the underlying compiler unchanged.  Nothing here may cost the user's
build: a transformation that fails compiles the original, with a warning.  Nothing here
may cost the user's files either: a command that would write over one of its inputs is
refused before anything runs (outputs.py), and a signal stops the underlying compiler
and leaves no temporary or half-written file (signals.py).
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from foresight.compiler.options import decode_source, encode_source
from foresight.driver import compile as cc
from foresight.driver import outputs, signals
from foresight.driver.args import (
    CommandLine,
    Input,
    c90_standard,
    compile_options,
    help_text,
    parse,
    preprocessor_args,
)
from foresight.errors import CompilerError, ForesightError, reader_gone

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Diagnostics that say the transformed text means something else than the user's file: a
# function it sees undeclared (a header moved ahead of the file's feature test macros
# left strcasestr() undeclared: its pointer cut to an int), a conversion that follows.
_MEANING = re.compile(r"\[-W(?:error=|error,-W)?(implicit-function-declaration|implicit-int|"
                      r"int-conversion|incompatible-pointer-types|int-to-pointer-cast|"
                      r"pointer-to-int-cast|builtin-declaration-mismatch|"
                      r"incompatible-function-pointer-types)\]")


def _meaning_changed(transformed: str, original: str) -> str | None:
    """The first kind of such diagnostic the transformed text draws more often than the
    original, or None."""
    def kinds(text: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for k in _MEANING.findall(_ANSI.sub("", text)):
            out[k] = out.get(k, 0) + 1
        return out
    new, old = kinds(transformed), kinds(original)
    return next((k for k, n in new.items() if n > old.get(k, 0)), None)


def run(argv: list[str], prog: str) -> int:
    """main() as a command: an error is one line and a status, a signal is passed on to
    the underlying compiler and ends the command with 128 + its number."""
    status = 1
    try:
        with signals.forwarding() as state:
            try:
                status = main(argv)
            except signals.Interrupted:
                pass
            except ForesightError as e:
                print(f"{prog}: error: {e}", file=sys.stderr)
                status = getattr(e, "status", 2)
    except (signals.Interrupted, KeyboardInterrupt):
        pass  # a signal between the last check and the handlers' removal
    if state.received is not None:
        name = signal.Signals(state.received).name
        print(f"{prog}: interrupted by {name}", file=sys.stderr)
        return 128 + state.received
    return status


def main(argv: list[str]) -> int:
    if "--help" in argv:  # --help=warnings and friends are cc's
        print(help_text(" ".join(cc.underlying_words())))
        return 0
    cl = parse(argv)
    trace_mem = "--trace-mem" in cl.own
    if trace_mem:
        cc.choose_trace_compiler()
    # The flags of a FORESIGHT_CC wrapper count too ("gcc -fno-inline").
    opts = compile_options(cl.own, [*cc.underlying_words()[1:], *cl.args])
    compiler = cc.underlying() + (cc.TRACE_FLAGS if trace_mem else [])
    outputs.refuse_writes_over_inputs(cl)
    transforms = cl.mode != "-E" and bool(cl.c_inputs)  # else no report, no directory made
    report_paths = (outputs.report_json_paths(cl, create=True) if transforms else None) or {}
    with outputs.pending_each(list(report_paths.values()), "--report-json") as report_files:
        if cl.mode == "-E" or not cl.c_inputs:
            return _passthrough(compiler, cl)
        if cl.mode in ("-c", "-S") and cl.output is not None and len(cl.inputs) > 1:
            return _passthrough(compiler, cl)  # cc's own error: -o with several inputs
        with signals.deferred():
            try:
                tmp = Path(tempfile.mkdtemp(prefix="foresight-cc-"))
            except OSError as e:   # TMPDIR, /tmp, /var/tmp and . all unwritable
                raise CompilerError(f"no temporary directory to work in: {e}") from e
        try:
            sources, report, warnings, notes = _transform_all(cl, opts, tmp)
            # inputs compiled without their optional insertions ("optional") or as written
            # ("all": the transformed text did not compile)
            dropped: dict[str, str] = {}
            if not any(changed for _, changed, _ in sources.values()):
                rc = _passthrough(compiler, cl)
            elif cl.mode == "link":
                rc = _compile_and_link(compiler, cl, sources, tmp, dropped)
            else:
                rc = _compile_only(compiler, cl, sources, dropped)
            for e in report:
                if dropped.get(e.get("source")) == "optional":
                    for f in e.get("forced_inline", []):
                        f["dropped"] = True
                elif dropped.get(e.get("source")) == "all":
                    e["compiled_unchanged"] = True
        finally:
            with signals.deferred():
                shutil.rmtree(tmp, ignore_errors=True)
        # After a rejected build, "libclang cannot parse" only repeats cc's diagnostics.
        warnings = [w for w in warnings if rc == 0 or "cannot parse" not in w]
        for w in warnings:
            _warn(w)
        _emit_report(cl, report, notes, report_paths, report_files, warned=len(warnings))
    return rc


def _passthrough(compiler: list[str], cl: CommandLine) -> int:
    """The user's command, unchanged; a program that is linked gets the runtime."""
    cmd = [*compiler, *cl.args]
    if cl.c_inputs:
        cmd += cc.runtime_cflags()
    if cl.mode == "link" and cl.inputs:
        cmd += cc.runtime_libs(cl.args, "--trace-mem" in cl.own)
    rc = cc.run(cmd, outputs.cc_outputs(cl))
    if rc != 0 and cl.mode == "link" and cl.inputs:
        cc.remove(cl.output or "a.out")
    return rc


def _transform_all(cl: CommandLine, opts, tmp: Path):
    """{input index: (path to compile, changed)}, the report entries of every nest, the
    warnings (printed once the underlying compiler has run) and notes for --report."""
    # The runtime's header found as the C compiler finds it (_tu_command): a program
    # that calls the API itself includes <foresight.h>.
    pp = [*preprocessor_args(cl.args), *cc.flag_macros(cc.common_flags(cl, keep_deps=False)),
          *(f"-isystem{f[2:]}" if f.startswith("-I") else f for f in cc.runtime_cflags())]
    sources: dict[int, tuple[Path, bool, Path | None]] = {}
    report: list[dict] = []
    warnings: list[str] = []
    notes: list[str] = []
    c90 = c90_standard(cl.args)
    packs = [a for a in cl.args if a in ("-fpack-struct", "-fno-pack-struct")][-1:] \
        == ["-fpack-struct"]
    as_written = c90 is not None or packs   # no hints at all
    if c90 is not None:
        notes.append(f"foresight cc: no hints: {c90} selects C90, and the hints need C99 "
                     "or later (foresight.h uses inline); compiled unchanged")
    elif packs:
        # (-fpack-struct=N is not: foresight.h's #pragma pack(push, 16) undoes it)
        notes.append("foresight cc: no hints: -fpack-struct would pack the runtime's "
                     "structures too, out of step with libforesight (gcc ignores #pragma "
                     "pack under it); compiled unchanged")
    for n, inp in enumerate(cl.c_inputs):
        src = Path(inp.path)
        sources[inp.index] = (src, False, None)
        if inp.path == "-":
            notes.append("foresight cc: -: no hints for standard input; compiled unchanged")
            continue
        if not src.is_file():
            if src.exists():   # a pipe (`-x c <(gen)`): read once, by cc
                notes.append(f"foresight cc: {inp.path}: not a regular file: no hints; "
                             "compiled unchanged")
            continue  # cc reports the missing file
        if as_written:
            result = _original(src)
        else:
            result = _transform(inp.path, [*pp, "-iquote", str(src.parent)], opts, report,
                                warnings)
        if result is None:
            continue
        text, changed, plain = result
        if "--emit-c" in cl.own:
            _emit_c(outputs.under_directory(str(cl.own["--emit-c"]), inp.path), text)
        if changed:
            d = tmp / str(n)
            d.mkdir()
            tmp_src = d / src.name
            tmp_src.write_bytes(encode_source(text))
            _same_time(src, tmp_src)
            plain_src = None
            if plain is not None:   # the text without its optional insertions
                (d / "plain").mkdir()
                plain_src = d / "plain" / src.name
                plain_src.write_bytes(encode_source(plain))
                _same_time(src, plain_src)
            sources[inp.index] = (tmp_src, True, plain_src)
    return sources, report, warnings, notes


def _same_time(src: Path, copy: Path) -> None:
    """The copy cc compiles gets the source's modification time: __TIMESTAMP__ is it."""
    try:
        st = src.stat()
        os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
    except OSError:
        pass


def _original(src: Path) -> tuple[str, bool, None] | None:
    """The source as written (for --emit-c when nothing is transformed)."""
    try:
        return decode_source(src.read_bytes()), False, None
    except OSError:
        return None  # cc reports it


def _transform(src: str, clang_args: list[str], opts, report: list[dict],
               warnings: list[str]):
    """(text, changed, text without its optional insertions or None), or None when the
    transformation failed (compile the original)."""
    for what, word in (("the file's path", src), *(("an argument", a) for a in clang_args)):
        try:
            word.encode()
        except UnicodeEncodeError:   # bytes of another encoding, kept by surrogateescape
            shown = src.encode(errors="surrogateescape").decode("ascii", "backslashreplace")
            bad = word.encode(errors="surrogateescape").decode("ascii", "backslashreplace")
            which = "" if word is src else f" ({bad})"
            warnings.append(f"{shown}: warning: foresight cc: {what}{which} is not UTF-8, "
                            "which libclang cannot read; compiled unchanged (no hints)")
            return None
    try:
        from foresight.compiler.pipeline import transform

        # The analyses make hundreds of thousands of small objects that live until the
        # end and no cycles worth finding: the cyclic collector's passes over them were
        # a fifth of the transformation's time.
        gc.disable()
        try:
            result = _deep(transform, src, clang_args, opts)
        finally:
            gc.enable()
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 - a compiler bug must never cost the build
        what = str(e) if isinstance(e, ForesightError) else f"{type(e).__name__}: {e}"
        warnings.append(f"{src}: warning: foresight cc: transformation failed ({what}); "
                        "compiled unchanged")
        return None
    warnings += result.warnings
    for entry in result.report:
        report.append({"source": str(src), **entry})
    return result.text, result.changed, result.plain


def _deep(fn, *args):
    """fn(*args) on a thread with a 512 MiB stack and room for 100,000 Python frames: the
    analyses recurse through expressions, and generated code sums hundreds of terms
    (`c[0]*a[i] + c[1]*a[i] + ...`), deeper than the main thread's 1,000 frames."""
    import threading

    out: dict = {}

    def run() -> None:
        try:
            out["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - raised again on the calling thread
            out["error"] = e

    limit = sys.getrecursionlimit()
    size = threading.stack_size(512 << 20)
    sys.setrecursionlimit(max(limit, 100_000))
    try:
        t = threading.Thread(target=run, name="foresight-cc", daemon=True)
        t.start()
    except RuntimeError:        # no thread (a small RLIMIT_AS, say): here, as deep as it goes
        sys.setrecursionlimit(limit)
        return fn(*args)
    finally:
        threading.stack_size(size)
    try:
        t.join()
    finally:
        sys.setrecursionlimit(limit)
    if "error" in out:
        raise out["error"]
    return out["value"]


def _warn(message: str) -> None:
    print(message if "warning:" in message else f"foresight cc: warning: {message}",
          file=sys.stderr)


def _emit_c(dest: Path, text: str) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        outputs.write_atomically(dest, encode_source(text), "--emit-c")
    except OSError as e:
        _warn(f"--emit-c: cannot write {dest}: {e.strerror}")
    except ForesightError as e:
        _warn(str(e))


def _tu_command(compiler: list[str], cl: CommandLine, inp: Input, path: Path, changed: bool,
                mode: str, output: str, dep_args: list[str]) -> list[str]:
    """One translation unit: the user's flags, the runtime's include dir, -iquote its dir."""
    cmd = [*compiler]
    if changed:
        # Before the user's -iquote directories: `#include "x.h"` finds the source's own
        # directory's x.h first, as it does compiling the source where it is.
        cmd += ["-iquote", str(Path(inp.path).parent)]
    # The runtime's header as a system header: its code is not the user's to warn on.  In
    # every unit, changed or not: a program may call the API itself (<foresight.h>).
    cmd += [f"-isystem{f[2:]}" if f.startswith("-I") else f for f in cc.runtime_cflags()]
    flags = cc.common_flags(cl, keep_deps=False)
    if cl.mode == "link":   # a compile step of a link build: the link comes later
        flags = cc.compile_step_flags(flags)
    cmd += [*flags, *dep_args]
    if changed:
        if any(a.startswith("-g") for a in cl.args):
            cmd.append(f"-fdebug-prefix-map={path.parent}={Path(inp.path).parent}")
        # #line gives __FILE__ the user's path; __BASE_FILE__ (the file cc was given)
        # would name the transformed copy.
        quoted = str(inp.path).replace("\\", "\\\\").replace('"', '\\"')
        cmd += ["-Wno-builtin-macro-redefined", f'-D__BASE_FILE__="{quoted}"']
    if cl.mode == "link" and output != os.devnull:
        cmd += _aux_names(compiler, cl, inp)
    return [*cmd, mode, "-x", "c", str(path), "-o", output]


def _aux_names(compiler: list[str], cl: CommandLine, inp: Input) -> list[str]:
    """A compile step of a link build writes its object into the temporary directory:
    the files GCC writes beside it (--coverage's .gcno and the .gcda path in the code,
    -fprofile-generate's, -fstack-usage, -save-temps, -fdump-*) are named as cc's own
    one-step build names them, OUTPUT-SOURCE.EXT beside the program, by -dumpdir and
    -dumpbase (GCC 11 and later; the user's own -dump* options kept as they are)."""
    if any(a.startswith("-dump") for a in cl.args) or not cc.names_aux_files(compiler):
        return []
    # (-o NAME: NAME-, whole and as written, as gcc passes it on: -fprofile-dir mangles
    # the path it is given; no -o, or -o -: a-; -save-temps=cwd: NAME's last part)
    out = cl.output if cl.output not in (None, "-") else "a"
    if _save_temps([*compiler[1:], *cl.args]) == "cwd":
        out = Path(out).name
    src = Path(inp.path)
    return ["-dumpdir", f"{out}-", "-dumpbase", src.name, "-dumpbase-ext", src.suffix]


def _save_temps(words: list[str]) -> str | None:
    """The value of the last -save-temps (or --save-temps) in `words`: "" without one
    (cwd's or obj's by the output), None where there is none."""
    found = None
    for a in words:
        a = a.removeprefix("-")
        if a == "-save-temps" or a == "save-temps":
            found = ""
        elif a.startswith(("-save-temps=", "save-temps=")):
            found = a.split("=", 1)[1]
    return found


def _dep_flags_of(cl: CommandLine) -> list[str]:
    """The user's -MD/-MMD/-MP/-MG (not -MF/-MT, which are set per translation unit)."""
    return [a for a in cl.args if a in ("-MD", "-MMD", "-MP", "-MG")]


def _compile_tu(compiler, cl, inp, sources, mode, output, dropped: dict[str, str]) -> int:
    """Compile one C input; if its transformed text is rejected, the original decides.

    The transformed text is compiled with cc's diagnostics held back.  Accepted: they are
    shown (at the user's file:line, thanks to #line).  Rejected: the original is compiled
    as written, so the user sees cc's own verdict on their code, and a build that only
    our text broke (a foresight bug, a header the user's -std cannot take) still succeeds.
    """
    path, changed, plain = sources[inp.index]
    dep_args, dep = cc.dependency_args(cl, inp, output)
    if cl.dep_gen:
        dep_args = [*_dep_flags_of(cl), *_user_dep_values(cl), *dep_args]
    writes = [output, dep, cl.wp_dep_file]
    # The transformed text, then (rejected) the same without its optional insertions.
    first_err = changed_meaning = None
    for text_path in ([path, plain] if plain is not None else [path]) if changed else []:
        if output == "-" and mode == "-S":   # -S -o -: a rejected text prints nothing
            return _to_stdout(compiler, cl, inp, sources, mode, dropped)
        cmd = _tu_command(compiler, cl, inp, text_path, True, mode, output, dep_args)
        with signals.deferred():  # a signal now: after the .d names the user's source
            rc, err = cc.run_captured(cmd + cc.diagnostics_color(cl.args), writes)
            first_err = err if first_err is None else first_err
            full = _warnings_are_errors([*cc.underlying_words()[1:], *cl.args])
            if rc == 0 and not err and (full or _layout_warnings(cl.args)):
                # Silent, but the original's own verdict is asked: under a warning that
                # fails the build, of a full compile (gcc's optimisers warn on what they
                # see, -Wmaybe-uninitialized, which the hint code changes: a helper's
                # probe's -Wall -Werror build that cc refused went through); else of
                # cc's front end, where the hints moved code gcc judges by its layout
                # (`for (...) s += a[i]; next();` on one line).
                rc, err = _original_verdict(compiler, cl, inp, mode, syntax_only=not full)
                sys.stderr.write(err)
                if rc != 0:
                    cc.remove(output)
                    return rc
                err = ""
            if rc == 0 and err:
                original = _original_diagnostics(compiler, cl, inp, mode)
                changed_meaning = _meaning_changed(err, original or "")
                if changed_meaning:
                    break   # the original decides, below
                sys.stderr.write(original or "")
            if rc == 0:
                cc.fix_dependency_file(dep, text_path, inp.path)
                cc.fix_dependency_file(cl.wp_dep_file, text_path, inp.path)
                if text_path is not path:
                    dropped[inp.path] = "optional"
                return 0
            if signals.pending():
                return rc  # interrupted: no second compile
    transformed = path
    if changed:
        path = Path(inp.path)
    rc = cc.run(_tu_command(compiler, cl, inp, path, False, mode, output, dep_args), writes)
    if rc != 0:
        cc.remove(output)
    elif changed:
        changed_meaning = changed_meaning or _meaning_changed(first_err or "", "")
        if (not changed_meaning and first_err is not None and _warnings_only(first_err)
                and output != "-" and not signals.pending()
                and _without_warnings(compiler, cl, inp, transformed, mode, output)):
            return 0
        dropped[inp.path] = "all"
        if changed_meaning:
            _warn(f"{inp.path}: warning: foresight cc: the transformed code drew "
                  f"[-W{changed_meaning}], which the original does not, so it was compiled "
                  "unchanged (please report this)")
        else:
            _warn(f"{inp.path}: warning: foresight cc: the transformed code did not compile, "
                  f"so it was compiled unchanged (please report this); {_first_error(err)}")
    return rc


def _to_stdout(compiler, cl, inp, sources, mode: str, dropped: dict[str, str]) -> int:
    """`-o -`: compiled into a temporary file, whose text then goes to stdout."""
    try:
        fd, tmp = tempfile.mkstemp(prefix="foresight-cc-", suffix=".s")
        os.close(fd)
    except OSError as e:
        raise CompilerError(f"no temporary file for -o -: {e.strerror}") from e
    try:
        rc = _compile_tu(compiler, cl, inp, sources, mode, tmp, dropped)
        if rc == 0:
            sys.stdout.flush()
            with open(tmp, "rb") as f:
                shutil.copyfileobj(f, sys.stdout.buffer)
            sys.stdout.flush()
        return rc
    finally:
        cc.remove(tmp)


def _warnings_only(stderr: str) -> bool:
    """Whether every error cc reported is a warning the user made an error (`[-Werror=X]`,
    `[-Wpedantic]` under -pedantic-errors); but not a size limit (stack, frame, object)
    the program may rely on, which the hints are never let exceed silently."""
    errors = [line.strip() for line in _ANSI.sub("", stderr).splitlines() if "error:" in line]
    return bool(errors) and all(
        re.search(r"\[-W(error=[\w=+-]+|pedantic)\]$", e)
        and not re.search(r"\[-Werror=(stack-usage|frame-larger-than|larger-than)", e)
        for e in errors)


def _without_warnings(compiler, cl, inp, transformed: Path, mode: str, output: str) -> bool:
    """After the original compiled (its object, dependency files and diagnostics are the
    user's): the transformed text compiled again with -w into a temporary file beside
    OUTPUT, which replaces it only when that succeeds.  No dependency files are written
    (the original's stand)."""
    cmd = [a for a in _tu_command(compiler, cl, inp, transformed, True, mode, output, [])
           if not a.startswith(("-Wp,-MD,", "-Wp,-MMD,"))]
    dest = Path(os.path.realpath(output))
    try:
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".fs-", suffix=dest.suffix)
        os.close(fd)
    except OSError:
        return False
    cmd[-1] = tmp   # the command ends with `-o OUTPUT`
    with signals.deferred():
        rc, _ = cc.run_captured([*cmd, "-w"], [tmp])
        try:
            if rc == 0 and not signals.pending():
                os.chmod(tmp, os.stat(dest).st_mode & 0o7777)
                os.replace(tmp, dest)
                return True
        except OSError:
            pass
        cc.remove(tmp)
    return False


def _original_diagnostics(compiler, cl, inp, mode) -> str | None:
    """What cc says about the user's file as written (its object discarded): the
    diagnostics the user sees, never ones about the inserted hints or at their columns.
    Run only when the transformed text drew any; None when interrupted."""
    _, err = _original_verdict(compiler, cl, inp, mode, syntax_only=False)
    return None if signals.pending() else err


# Warnings gcc gives from its optimisers, which the hint code's changes can hide
_LATE_WARNINGS = frozenset({
    "maybe-uninitialized", "uninitialized", "array-bounds", "stringop-overflow",
    "stringop-overread", "stringop-truncation", "null-dereference", "free-nonheap-object",
    "alloc-size-larger-than", "use-after-free", "dangling-pointer", "return-local-addr",
    "strict-overflow", "aggressive-loop-optimizations", "vla-larger-than",
    "alloca-larger-than", "restrict", "nonnull", "mismatched-dealloc",
    "mismatched-new-delete", "infinite-recursion"})


def _warnings_are_errors(args: list[str]) -> bool:
    """Whether a warning of gcc's optimisers can fail the build: -Werror in effect (the
    last of -Werror and -Wno-error), or -Werror= one of them."""
    every = False
    some = False
    for a in args:
        if a in ("-Werror", "-Wno-error"):
            every = a == "-Werror"
        elif a.startswith("-Werror="):
            some = some or any(w in _LATE_WARNINGS for w in a[len("-Werror="):].split(","))
    return every or some


def _layout_warnings(args: list[str]) -> bool:
    """Whether -Wmisleading-indentation is on (-Wall or itself, not turned off, no -w)."""
    on = False
    for a in args:
        if a == "-w":
            return False
        if a in ("-Wall", "-Wmisleading-indentation"):
            on = True
        elif a == "-Wno-misleading-indentation":
            on = False
    return on


_DEPENDENCY_FLAGS = frozenset({"-MD", "-MMD", "-MP", "-MG"})
_DEPENDENCY_VALUES = frozenset({"-MF", "-MT", "-MQ"})


def _original_verdict(compiler, cl, inp, mode, syntax_only: bool) -> tuple[int, str]:
    """cc's status and diagnostics on the user's file as written: its front end alone
    (-fsyntax-only), or compiled in full, into a temporary directory that takes what GCC
    writes beside an object too (--coverage's .gcno, -fstack-usage, -save-temps: the
    user's files are the real compile's), without dependency files."""
    with signals.deferred():
        work = Path(tempfile.mkdtemp(prefix="foresight-cc-verdict-"))
    try:
        cmd = _tu_command(compiler, cl, inp, Path(inp.path), False, mode, str(work / "x.o"),
                          [])
        kept, skip = [], False
        for a in cmd:
            if skip:
                skip = False
            elif a in _DEPENDENCY_VALUES:
                skip = True
            elif a not in _DEPENDENCY_FLAGS and not a.startswith(("-Wp,-MD,", "-Wp,-MMD,")):
                kept.append(a)
        if (not syntax_only and not any(a.startswith("-dump") for a in cl.args)
                and cc.names_aux_files(compiler)):
            kept = [*kept[:-2], "-dumpdir", f"{work}/", *kept[-2:]]
        only = ["-fsyntax-only"] if syntax_only else []
        rc, err = cc.run_captured([*kept, *only, *cc.diagnostics_color(cl.args)], [])
    finally:
        with signals.deferred():
            shutil.rmtree(work, ignore_errors=True)
    return (rc, err) if not signals.pending() else (rc or 1, "")


def _first_error(stderr: str) -> str:
    """cc's first error line, without colours, and how many more there were."""
    errors = [line.strip() for line in _ANSI.sub("", stderr).splitlines()
              if "error:" in line]
    if not errors:
        return "cc gave no error message"
    more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
    return f"cc said: {errors[0]}{more}"


def _user_dep_values(cl: CommandLine) -> list[str]:
    """The user's own -MF/-MT/-MQ, kept as written."""
    out, args, i = [], cl.args, 0
    while i < len(args):
        a = args[i]
        if a in ("-MF", "-MT", "-MQ") and i + 1 < len(args):
            out += args[i:i + 2]
            i += 2
            continue
        if a.startswith(("-MF", "-MT", "-MQ")) and len(a) > 3:
            out.append(a)
        i += 1
    return out


def _compile_only(compiler: list[str], cl: CommandLine, sources,
                  dropped: dict[str, str]) -> int:
    """-c / -S: each C input to its own output; the other inputs in one cc command."""
    rc = 0
    for inp in cl.c_inputs:
        rc = max(rc, _compile_tu(compiler, cl, inp, sources, cl.mode,
                                 outputs.default_output(cl, inp), dropped))
    others = [inp for inp in cl.inputs if not inp.is_c]
    if others:
        cmd = [*compiler, *cc.common_flags(cl, keep_deps=True), cl.mode]
        if cl.output is not None:
            cmd += ["-o", cl.output]
        writes = [outputs.default_output(cl, inp) for inp in others if not inp.is_object]
        rc = max(rc, cc.run(cmd + _with_lang(others), writes))
    return rc


def _compile_and_link(compiler: list[str], cl: CommandLine, sources, tmp: Path,
                      dropped: dict[str, str]) -> int:
    """C inputs to temporary objects, then the user's link in the user's order + runtime."""
    objects: dict[int, str] = {}
    rc = 0
    for n, inp in enumerate(cl.c_inputs):
        obj = str(tmp / f"{n}.o")   # not the source's name: it may be NAME_MAX long
        rc = max(rc, _compile_tu(compiler, cl, inp, sources, "-c", obj, dropped))
        objects[inp.index] = obj
    if rc != 0:
        cc.remove(cl.output or "a.out")  # cc leaves no program behind a failed compile
        _save_objects(compiler, cl, objects)
        return rc
    others = [inp for inp in cl.inputs if not inp.is_c]
    compiles_more = any(not inp.is_object for inp in others)
    placed = {inp.index: [objects[inp.index]] if inp.index in objects else _with_lang([inp])
              for inp in cl.inputs}
    cmd = [*compiler, *cc.common_flags(cl, keep_deps=compiles_more, inputs=placed)]
    if cl.output is not None:
        cmd += ["-o", cl.output]
    rc = cc.run(cmd + cc.runtime_libs(cl.args, "--trace-mem" in cl.own), outputs.cc_outputs(cl))
    if rc != 0:
        cc.remove(cl.output or "a.out")
    _save_objects(compiler, cl, objects)
    return rc


def _save_objects(compiler: list[str], cl: CommandLine, objects: dict[int, str]) -> None:
    """-save-temps keeps each object of a one-step build beside its .i and .s, as cc's
    OUTPUT-SOURCE.o (_aux_names names those; the object itself is our temporary one),
    also those of the inputs that compiled where another did not."""
    if _save_temps([*compiler[1:], *cl.args]) is None:
        return
    for inp in cl.c_inputs:
        names = _aux_names(compiler, cl, inp)
        if not names:
            return
        if not os.path.isfile(objects[inp.index]):
            continue
        saved = f"{names[1]}{Path(inp.path).stem}.o"
        try:
            shutil.copyfile(objects[inp.index], saved)
        except OSError as e:
            _warn(f"-save-temps: cannot keep the object {saved}: {e.strerror}")


def _with_lang(inputs: list[Input]) -> list[str]:
    out: list[str] = []
    for inp in inputs:
        out += ["-x", inp.lang, inp.path, "-x", "none"] if inp.lang not in (None, "none") \
            else [inp.path]
    return out


def _emit_report(cl: CommandLine, report: list[dict], notes: list[str],
                 paths: dict[str | None, str], files: dict[str, outputs.PendingFile],
                 warned: int = 0) -> None:
    """--report's text on stderr and the --report-json files (`paths`: by C input, or
    None for one file of them all); `warned`: the warnings printed (an input compiled
    unchanged has none of its nests in the report)."""
    if "--report" in cl.own:
        from foresight.compiler.report import format_report

        for note in notes:
            print(note, file=sys.stderr)
        if report:
            print(format_report(report), file=sys.stderr)
        elif warned:
            print("foresight cc: no loop nests analysed (see the warnings above)",
                  file=sys.stderr)
        elif not notes:
            print("foresight cc: no loop nests found", file=sys.stderr)
    for path, f in files.items():
        mine = [e for e in report if paths.get(e.get("source"), paths.get(None)) == path]
        f.write((json.dumps(mine, indent=2, default=str) + "\n").encode())


def entry() -> None:
    """Console script `foresight-cc`."""
    try:
        status = run(sys.argv[1:], "foresight-cc")
    except BrokenPipeError:
        status = reader_gone()
    sys.exit(status)
