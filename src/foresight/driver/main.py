"""Parse cc-style arguments, transform each C input, compile with the real compiler.

Arguments the driver does not know pass through to $FORESIGHT_CC (default `cc`).
C inputs are transformed into a private temporary directory under their own base
name, so cc's default output names (foo.o, foo.d) stay what they would have been.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from foresight.errors import CompilerError, UsageError

_PREPROCESSOR = ("-I", "-D", "-U", "-include", "-isystem", "-iquote", "-idirafter")
_TAKES_VALUE = {"-o", "-I", "-D", "-U", "-include", "-isystem", "-iquote", "-idirafter",
                "-MF", "-MT", "-MQ", "-x", "-L", "-l", "-Xlinker", "-T", "-u", "-e"}
_OWN_VALUE = {"--emit-c", "--report-json", "--fs-mem", "--fs-page", "--fs-block",
              "--fs-preset", "--fs-latency"}


def _expand_response_files(argv: list[str]) -> list[str]:
    out = []
    for a in argv:
        if a.startswith("@") and Path(a[1:]).is_file():
            out += _expand_response_files(shlex.split(Path(a[1:]).read_text()))
        else:
            out.append(a)
    return out


def _size(opt: str, value: str) -> int:
    from foresight.units import parse_size

    try:
        return parse_size(value)
    except (ValueError, UsageError) as e:
        raise UsageError(f"foresight cc: {opt} {value!r}: not a size (e.g. 64K, 256M)") from e


def main(argv: list[str]) -> int:
    from foresight.compiler.options import CompileOptions

    argv = _expand_response_files(argv)
    own: dict[str, str | bool] = {}
    cc_args: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--no-prefetch", "--report"):
            own[a] = True
        elif a in _OWN_VALUE or any(a.startswith(o + "=") for o in _OWN_VALUE):
            if "=" in a:
                k, v = a.split("=", 1)
            else:
                if i + 1 >= len(argv):
                    raise UsageError(f"foresight cc: {a} needs a value")
                k, v = a, argv[i + 1]
                i += 1
            own[k] = v
        else:
            cc_args.append(a)
        i += 1
    preset = str(own.get("--fs-preset", "adaptive"))
    if preset not in ("adaptive", "paper"):
        raise UsageError(f"foresight cc: --fs-preset {preset!r}: use adaptive or paper")
    kw: dict = {"prefetch": "--no-prefetch" not in own, "preset": preset}
    if "--fs-mem" in own:
        kw["memory_bytes"] = _size("--fs-mem", str(own["--fs-mem"]))
    if "--fs-page" in own:
        kw["page_size"] = _size("--fs-page", str(own["--fs-page"]))
    if "--fs-block" in own:
        kw["block_size"] = _size("--fs-block", str(own["--fs-block"]))
        if kw["block_size"] & (kw["block_size"] - 1):
            raise UsageError("foresight cc: --fs-block must be a power of two")
    if "--fs-latency" in own:
        try:
            kw["latency_cycles"] = int(str(own["--fs-latency"]))
        except ValueError as e:
            raise UsageError("foresight cc: --fs-latency needs a number of cycles") from e
    opts = CompileOptions(**kw)
    return _compile(cc_args, opts, own)


def _compile(cc_args: list[str], opts, own: dict) -> int:
    from foresight.config import flags

    cc = shlex.split(os.environ.get("FORESIGHT_CC", "cc"))
    modes = set(cc_args)
    compile_only = bool(modes & {"-c", "-S", "-E", "-M", "-MM"})
    preprocess_only = bool(modes & {"-E", "-M", "-MM"})
    # Which arguments are C sources (respecting -x).
    sources: list[int] = []
    lang = None
    i = 0
    while i < len(cc_args):
        a = cc_args[i]
        if a == "-x" and i + 1 < len(cc_args):
            lang = cc_args[i + 1]
            i += 2
            continue
        if a.startswith("-x") and len(a) > 2:
            lang = a[2:]
        elif a in _TAKES_VALUE:
            i += 2
            continue
        elif not a.startswith("-") and (lang == "c" or (lang in (None, "none")
                                                          and a.endswith(".c"))):
            sources.append(i)
        i += 1
    if preprocess_only or not sources:
        return subprocess.call([*cc, *cc_args, *([] if compile_only or not _links(cc_args)
                                                 else shlex.split(flags(False, True)))])
    pp_args = _preprocessor_args(cc_args)
    from foresight.compiler.pipeline import transform

    report: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="foresight-cc-") as tmp:
        args = list(cc_args)
        renames: dict[str, str] = {}
        for n, idx in enumerate(sources):
            src = Path(cc_args[idx])
            if not src.is_file():
                continue  # cc reports the missing file
            result = transform(src, [*pp_args, f"-iquote{src.parent}"], opts)
            for w in result.warnings:
                print(f"foresight cc: warning: {w}", file=sys.stderr)
            for entry in result.report:
                report.append(entry)
            if "--emit-c" in own:
                out_dir = Path(str(own["--emit-c"]))
                out_dir.mkdir(parents=True, exist_ok=True)
                (out_dir / src.name).write_text(result.text, encoding="latin-1")
            if result.changed:
                d = Path(tmp) / str(n)
                d.mkdir()
                tmp_src = d / src.name
                tmp_src.write_text(result.text, encoding="latin-1")
                args[idx] = str(tmp_src)
                renames[str(tmp_src)] = str(src)
                args[idx:idx] = [f"-iquote{src.parent}"]
        extra = shlex.split(flags(True, False))
        if not compile_only:
            extra += shlex.split(flags(False, True))
        outputs = _outputs(cc_args)
        rc = subprocess.call([*cc, *args, *extra])
        if renames:
            _fix_dependency_files(cc_args, renames)
        if rc != 0:
            for out in outputs:
                Path(out).unlink(missing_ok=True)
    _emit_report(report, own)
    return rc


def _links(cc_args: list[str]) -> bool:
    return not set(cc_args) & {"-c", "-S", "-E", "-M", "-MM"}


def _preprocessor_args(cc_args: list[str]) -> list[str]:
    """The arguments that change what libclang sees: -I -D -U -include ... and -std=."""
    out, i = [], 0
    while i < len(cc_args):
        a = cc_args[i]
        if a in _PREPROCESSOR and i + 1 < len(cc_args):
            out += [a, cc_args[i + 1]]
            i += 2
            continue
        if a.startswith(_PREPROCESSOR) or a.startswith("-std=") or a == "-ansi":
            out.append(a)
        i += 1
    return out


def _outputs(cc_args: list[str]) -> list[str]:
    for i, a in enumerate(cc_args[:-1]):
        if a == "-o":
            return [cc_args[i + 1]]
    return []


def _fix_dependency_files(cc_args: list[str], renames: dict[str, str]) -> None:
    """-MD/-MMD files must name the user's source, not the temporary copy."""
    if not set(cc_args) & {"-MD", "-MMD"}:
        return
    candidates = []
    for i, a in enumerate(cc_args[:-1]):
        if a == "-MF":
            candidates.append(Path(cc_args[i + 1]))
    out = _outputs(cc_args)
    if out:
        candidates.append(Path(out[0]).with_suffix(".d"))
    candidates += [Path(Path(orig).name).with_suffix(".d") for orig in renames.values()]
    for dep in candidates:
        if dep.is_file():
            text = dep.read_text()
            for tmp_src, orig in renames.items():
                text = text.replace(tmp_src, orig)
            dep.write_text(text)


def _emit_report(report: list[dict], own: dict) -> None:
    if "--report" in own:
        from foresight.compiler.report import format_report

        print(format_report(report), file=sys.stderr)
    if "--report-json" in own:
        path = Path(str(own["--report-json"]))
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(report, indent=2))
        tmp.replace(path)


def entry() -> None:
    """Console script `foresight-cc`."""
    try:
        sys.exit(main(sys.argv[1:]))
    except (CompilerError, UsageError) as e:
        print(e, file=sys.stderr)
        sys.exit(2)
