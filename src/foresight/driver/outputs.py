"""Every file a `foresight cc` command writes, checked against the files it reads.

cc refuses `cc -c a.c -o a.c` ("input file is the same as output file") but not `-MF a.c`;
the driver refuses every write that would land on an input, before it does anything:
the output (given or cc's default), the dependency files, the `--emit-c` copies and the
`--report-json` file.  Files the driver writes itself are written atomically (a
temporary file in the same directory, renamed), so an error or a signal never leaves
half a file, and the temporary file is removed on every path out.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from foresight.driver import signals
from foresight.driver.args import CommandLine, Input
from foresight.errors import CompilerError, UsageError


class OutputIsInput(CompilerError):
    """A write would replace an input: refused before anything runs, exit 1 as cc."""

    status = 1


@dataclass(frozen=True)
class Write:
    path: str
    what: str        # how the user asked for it: "-o a.o", "-MF a.d", "--emit-c DIR"
    by_cc: bool      # written by the underlying compiler (else by the driver itself)


def default_output(cl: CommandLine, inp: Input) -> str:
    """Where cc puts the output of one translation unit in -c / -S mode."""
    if cl.output is not None:
        return cl.output
    return inp.stem + (".s" if cl.mode == "-S" else ".o")


def dependency_file(cl: CommandLine, inp: Input, output: str) -> tuple[str, str] | None:
    """(.d path, target) as cc names them for one translation unit with -MD/-MMD."""
    if not cl.dep_gen:
        return None
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
    return (cl.dep_file if cl.dep_file is not None else dep), target


def planned_writes(cl: CommandLine) -> list[Write]:
    """The files this command may write, as cc would name them."""
    writes: list[Write] = []
    compiled = [inp for inp in cl.inputs if not inp.is_object]
    if not cl.inputs:
        pass  # `cc --version`, or cc's own error: nothing is written
    elif cl.mode == "-E":
        if cl.output is not None:
            writes.append(Write(cl.output, f"-o {cl.output}", True))
    elif cl.mode in ("-c", "-S"):
        for inp in compiled:
            out = default_output(cl, inp)
            what = f"-o {out}" if cl.output is not None else f"the output {out} of {inp.path}"
            writes.append(Write(out, what, True))
    else:
        out = cl.output or "a.out"
        writes.append(Write(out, f"-o {out}" if cl.output else "the output a.out", True))
    if cl.mode != "-E":
        for inp in compiled:
            dep = dependency_file(cl, inp, default_output(cl, inp))
            if dep is not None:
                what = f"-MF {dep[0]}" if cl.dep_file is not None \
                    else f"the dependency file {dep[0]}"
                writes.append(Write(dep[0], what, True))
    if cl.dep_file is not None and not any(w.path == cl.dep_file for w in writes):
        writes.append(Write(cl.dep_file, f"-MF {cl.dep_file}", True))
    if cl.wp_dep_file is not None:
        writes.append(Write(cl.wp_dep_file, f"-Wp,-MD,{cl.wp_dep_file}", True))
    if "--emit-c" in cl.own:
        d = str(cl.own["--emit-c"])
        for inp in cl.c_inputs:
            path = str(under_directory(d, inp.path))
            writes.append(Write(path, f"--emit-c {d} (writing {path})", False))
    for path in (report_json_paths(cl) or {}).values():
        writes.append(Write(path, f"--report-json {path}", False))
    return [w for w in writes if w.path not in ("-", "")]


def under_directory(directory: str | Path, source: str, suffix: str = "") -> Path:
    """Where a per-source output goes in a directory (`--emit-c DIR`, `--report-json
    DIR/`): a relative source's path as given, so that `a/util.c` and `b/util.c` of one
    build keep apart (`DIR/a/util.c`; `..` dropped); an absolute path, its part under the
    working directory, or only its name when it is elsewhere."""
    path = os.path.normpath(source)
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        path = os.path.basename(path) if rel.startswith("..") else rel
    parts = [p for p in Path(path).parts if p not in ("..", ".")]
    name = Path(*parts) if parts else Path("stdin")
    return Path(directory) / name.parent / (name.name + suffix)


def report_json_paths(cl: CommandLine, create: bool = False) -> dict[str | None, str] | None:
    """Where `--report-json` writes (None: not asked for): {None: FILE} for one file that
    takes the whole command's report, else one file per C input, by its path.  A
    directory (one that exists, or a name ending in `/`) takes `NAME.json` after each C
    input, and a `%` in the name stands for each input's name without its extension:
    `--report-json reports/` and `--report-json reports/%.json` write
    `reports/kernel.c.json` and `reports/kernel.json` for `kernel.c`
    (`reports/a/util.c.json` for `a/util.c`: see under_directory), one per file of a
    command that compiles several, or of each command of a `make` that compiles one."""
    if "--report-json" not in cl.own:
        return None
    given = str(cl.own["--report-json"])
    sources = [inp.path for inp in cl.c_inputs] or ["stdin"]   # (as entries name them)
    if "%" in given:
        out = {src: given.replace("%", Path(src).stem) for src in sources}
        first: dict[str, str] = {}
        for src, path in out.items():
            if path in first and first[path] != src:
                raise UsageError(f"--report-json {given}: {first[path]} and {src} would both "
                                 f"write {path} (a directory, --report-json "
                                 f"{Path(given).parent}/, keeps them apart)")
            first.setdefault(path, src)
        return out
    if given.endswith("/") or Path(given).is_dir():
        out = {}
        for src in sources:
            path = under_directory(given, src, ".json")
            if create and Path(given).is_dir():   # its subdirectories, not the one named
                with contextlib.suppress(OSError):
                    path.parent.mkdir(parents=True, exist_ok=True)
            out[src] = str(path)
        return out
    return {None: given}


def _same_file(a: str, b: str) -> bool:
    """a and b are one regular file (also through symbolic or hard links)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False  # one does not exist: nothing to write over
    return stat.S_ISREG(sa.st_mode) and (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def refuse_writes_over_inputs(cl: CommandLine) -> None:
    """OutputIsInput when a planned write is an input (a source, an object, a @file)."""
    inputs = [inp.path for inp in cl.inputs if inp.path != "-"] + cl.response_files
    for w in planned_writes(cl):
        for path in inputs:
            if _same_file(w.path, path):
                same = "" if os.path.normpath(w.path) == os.path.normpath(path) \
                    else " (the same file)"
                raise OutputIsInput(f"{w.what} is the input {path}{same}; "
                                    "refusing to write over it")


def cc_outputs(cl: CommandLine) -> list[str]:
    """The files the underlying compiler writes for the user's command as written."""
    return [w.path for w in planned_writes(cl) if w.by_cc]


def _mode_for(dest: Path) -> int:
    """An existing file keeps its permissions; a new one gets 0666 minus the umask."""
    try:
        return stat.S_IMODE(os.stat(dest).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


class PendingFile:
    """A file the driver writes at the end, reserved at the start.

    The temporary file next to the destination is created now, so an unwritable place
    is an error before anything is compiled; write() fills it and renames it over the
    destination (atomic: readers see the old file or the new one); discard() removes it.
    """

    def __init__(self, path: str, option: str) -> None:
        self.path, self.option = path, option
        # Through a symbolic link: replace the file it names, not the link.
        self.dest = Path(os.path.realpath(path))
        self.tmp: Path | None = None
        self.device = False
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = 0
        if stat.S_ISDIR(mode):
            raise UsageError(f"{option} {path}: is a directory")
        if mode and not stat.S_ISREG(mode):
            # /dev/stdout, a pipe: written in place (renaming over a device node, as root,
            # would replace the node).
            if not os.access(path, os.W_OK):
                raise UsageError(f"{option} {path}: cannot write: Permission denied")
            self.device = True
            return
        with signals.deferred():  # a signal here must not leave the file behind
            try:
                # Within NAME_MAX (255 bytes) with mkstemp's 8 characters and the suffix.
                short = os.fsencode(self.dest.name)[:200].decode(errors="ignore")
                fd, tmp = tempfile.mkstemp(dir=self.dest.parent, prefix=f".{short}.",
                                           suffix=".tmp")
            except OSError as e:
                raise UsageError(f"{option} {path}: cannot write: {e.strerror}") from e
            os.close(fd)
            self.tmp = Path(tmp)

    def write(self, data: bytes) -> None:
        if self.device:
            try:
                with open(self.path, "wb") as f:
                    f.write(data)
            except OSError as e:
                raise CompilerError(f"{self.option} {self.path}: cannot write: "
                                    f"{e.strerror}") from e
            return
        if self.tmp is None:
            raise CompilerError(f"{self.option} {self.path}: already written")
        try:
            self.tmp.write_bytes(data)
            os.chmod(self.tmp, _mode_for(self.dest))
            os.replace(self.tmp, self.dest)
            self.tmp = None
        except OSError as e:
            raise CompilerError(f"{self.option} {self.path}: cannot write: "
                                f"{e.strerror}") from e
        finally:
            self.discard()

    def discard(self) -> None:
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                self.tmp.unlink()
            self.tmp = None


def write_atomically(path: str | Path, data: bytes, option: str) -> None:
    """Replace path with data in one rename; never half a file."""
    PendingFile(str(path), option).write(data)


@contextlib.contextmanager
def pending_each(paths: list[str], option: str) -> Iterator[dict[str, PendingFile]]:
    """A PendingFile for each of `paths`, by path, each discarded unless written."""
    files: dict[str, PendingFile] = {}
    try:
        for path in paths:
            if path not in files:
                files[path] = PendingFile(path, option)
        yield files
    finally:
        for f in files.values():
            f.discard()
