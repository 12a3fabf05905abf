"""Load a C file into libclang, and the file-wide facts the front end reads from it: the
macro expansions in its text, the macros that read __COUNTER__, and where the runtime's
header may be included."""

from __future__ import annotations

import os
import re
import subprocess
from functools import cache
from pathlib import Path

import clang.cindex as ci

from foresight.compiler.frontend.cshim import forget_files, remember_main
from foresight.compiler.frontend.cursors import end_of, start_of

K = ci.CursorKind


class ParseFailure(Exception):
    """libclang could not parse the file: it is compiled unchanged."""


@cache
def _builtin_headers() -> list[str]:
    """Where libclang finds the compiler's own headers (stddef.h, stdatomic.h, ...), which
    the libclang wheel lacks: clang's, from Debian's libclang-common-N-dev (installed by
    `make setup`; a version no newer than the wheel's, whose builtins it knows), else
    gcc's (whose <stdatomic.h> clang cannot parse; clang's own hands over to it unless
    told it is freestanding, which shim/stdatomic.h does).  Headers only gcc has
    (<omp.h>, <openacc.h>) come from gcc's directory, searched after all others."""
    try:
        out = subprocess.run(["cc", "-print-file-name=include"], capture_output=True,
                             text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    gcc = [out] if out and Path(out).is_dir() else []
    found = []
    for inc in Path("/usr/lib").glob("llvm-*/lib/clang/*/include/stdatomic.h"):
        try:
            found.append((int(inc.parent.parent.name.split(".")[0]), inc.parent.parent))
        except ValueError:
            continue
    if found:
        mine = _libclang_major()
        older = [f for f in found if f[0] <= mine]
        return ["-isystem", str(Path(__file__).parent / "shim"),
                "-resource-dir", str(max(older)[1] if older else min(found)[1]),
                *(a for d in gcc for a in ("-idirafter", d))]
    return [a for d in gcc for a in ("-isystem", d)]


@cache
def _cc_include_dirs() -> list[str]:
    """-isystem for each directory cc ($FORESIGHT_CC) searches for headers that is not a
    system directory libclang searches already: the ones a compiler wrapper adds (MPICH's
    and Open MPI's mpicc: the directory of <mpi.h>), from `cc -E -v`, in cc's order."""
    from foresight.driver.compile import underlying_words

    try:
        # LC_ALL=C: the headings parsed below are translated otherwise (gcc-12-locales).
        err = subprocess.run([*underlying_words(), "-E", "-v", "-x", "c", "/dev/null"],
                             capture_output=True, text=True, timeout=30,
                             env=dict(os.environ, LC_ALL="C")).stderr
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    out: list[str] = []
    inside = False
    for line in err.splitlines():
        if line.startswith("#include ") and "search starts here" in line:
            inside = True
        elif line.startswith("End of search list"):
            break
        elif inside and line.startswith(" "):
            d = line.strip()
            # The system's own and the compilers' own directories: libclang has them,
            # in its order (gcc's builtin headers are not clang's: _builtin_headers).
            if (d.rstrip("/") in ("/usr/include", "/usr/local/include")
                    or d.startswith(("/usr/lib/gcc/", "/usr/lib/llvm"))
                    or d.rstrip("/").removeprefix("/usr/include/").count("/") == 0
                    and d.rstrip("/").endswith("-linux-gnu")):
                continue
            out += ["-isystem", d]
    return out


# gcc's headers that clang rejects, as libclang reads them (the C compiler reads the
# originals): GCC 12's <omp.h> names a deallocator in the malloc attribute,
# `__attribute__((__malloc__ (omp_free)))`, which clang takes no argument for.  And
# what glibc gives gcc only: <complex.h> defines CMPLX for GCC 4.7 and later, and
# libclang says it is GCC 4.2, so a CMPLX(re, im) would be a call of an undeclared
# function (one that might synchronise, and whose value would be an int).
_GCC_ONLY = ["-D__malloc__(...)=__malloc__",
             "-DCMPLX(x,y)=__builtin_complex((double)(x),(double)(y))",
             "-DCMPLXF(x,y)=__builtin_complex((float)(x),(float)(y))",
             "-DCMPLXL(x,y)=__builtin_complex((long double)(x),(long double)(y))"]


def _libclang_major() -> int:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("libclang").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 1 << 30


# The macros by which code tells compilers apart, which libclang defines as clang does
# (__GNUC__ 4) and cc as itself (gcc 12: __GNUC__ 12, no __clang__).  All begin with two
# underscores, so `_F` and the rest is a name of the same length no one else uses.
_IDENTITY = re.compile(rb"\b(__GNUC__|__GNUC_MINOR__|__GNUC_PATCHLEVEL__|__GNUG__|__clang__"
                       rb"|__clang_major__|__clang_minor__|__clang_patchlevel__|__llvm__)\b")


@cache
def _cc_identity() -> dict[bytes, bytes] | None:
    """What cc ($FORESIGHT_CC) defines the identity macros as (an absent one: not
    defined); None when cc does not say (`cc -dM -E` fails or prints no __STDC__)."""
    from foresight.driver.compile import underlying_words

    try:
        out = subprocess.run([*underlying_words(), "-dM", "-E", "-x", "c", "/dev/null"],
                             capture_output=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    defined = dict(re.findall(rb"^#define (\w+) (.*)$", out, re.M))
    if b"__STDC__" not in defined:
        return None
    return {k: v.strip() for k, v in defined.items() if _IDENTITY.fullmatch(k)}


def _stand_in(name: bytes) -> bytes:
    """The identifier of `name`'s length that stands for it in the analysis' copy:
    `__GNUC__` -> `_FGNUC__`, still a macro name for #ifdef and defined()."""
    return b"_F" + name[2:]


def _as_cc_sees(text: bytes) -> bytes:
    """`text` with each identity macro renamed to its stand-in (same length: every
    offset the analysis finds is the file's own); _stand_ins defines them as cc does."""
    return _IDENTITY.sub(lambda m: _stand_in(m.group(1)), text)


def _stand_ins(cc: dict[bytes, bytes]) -> list[str]:
    """-D options giving the stand-ins cc's values (one cc does not define stays
    undefined)."""
    return [f"-D{_stand_in(k).decode()}={v.decode()}" for k, v in sorted(cc.items())]


def _user_files(tu: ci.TranslationUnit, main: str) -> list[str]:
    """The main file and the headers it includes from outside /usr (the system's)."""
    out = [main]
    for inc in tu.get_includes():
        name = str(inc.include) if inc.include is not None else ""
        if name and name not in out and not os.path.realpath(name).startswith("/usr/"):
            out.append(name)
    return out


def openmp(arg: str) -> bool:
    """Whether compiler argument `arg` turns OpenMP on (-fopenmp, -fopenmp=libomp; not
    -fopenmp-simd, which only honours simd directives)."""
    return arg == "-fopenmp" or arg.startswith("-fopenmp=")


def _without_openmp(arg: str) -> str:
    """-fopenmp as its macro only: under -fopenmp libclang hides an OpenMP directive's
    statement in a captured statement; without it the loop under `#pragma omp for` is a
    plain loop and the directive is read from the text (frontend/pragmas.py).  The code
    still sees _OPENMP (GCC 12's value) as cc does."""
    return "-D_OPENMP=201511" if openmp(arg) else arg


def load(source: Path, clang_args: list[str], hide_openmp: bool = False,
         text: bytes | None = None) -> ci.TranslationUnit:
    """`source` parsed by libclang with the compiler's arguments; ParseFailure when it
    has errors.  Where the file or one of its own headers tells compilers apart
    (`#if __GNUC__ >= 5`, `#ifdef __clang__`), it is parsed as cc reads it.  Under
    -fopenmp the statements under OpenMP directives are shown as plain statements, or,
    with `hide_openmp`, hidden in directive cursors (kinds OMP_*).  `text`: the file's
    contents to parse instead of what is on disk (its includes found as the file's)."""
    args = ["-x", "c", *(clang_args if hide_openmp else map(_without_openmp, clang_args)),
            *_builtin_headers(), *_GCC_ONLY, "-Wno-everything"]
    opts = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    try:
        # `./-x.c` is `-x.c` as a Path, which libclang would take for an option.
        name = str(source) if not str(source).startswith("-") else f"./{source}"
        own = [(name, text)] if text is not None else []
        forget_files()
        tu = ci.Index.create().parse(name, args=args, unsaved_files=own, options=opts)
        # A header not found may be one cc finds where libclang does not look: an MPI
        # compiler wrapper (FORESIGHT_CC=mpicc) adds its own -I for <mpi.h>.  Searched
        # before the files are looked at for identity macros: a missing header is a
        # fatal error, which hides it and every header included after it.
        if any(d.severity >= ci.Diagnostic.Error and "file not found" in d.spelling
               for d in tu.diagnostics) and _cc_include_dirs():
            args = [*args, *_cc_include_dirs()]
            forget_files()
            tu = ci.Index.create().parse(name, args=args, unsaved_files=own, options=opts)
        unsaved = []
        for f in _user_files(tu, name):
            try:
                contents = text if text is not None and f == name else Path(f).read_bytes()
            except OSError:
                continue
            if _IDENTITY.search(contents):
                unsaved.append((f, _as_cc_sees(contents)))
        # cc is asked only then (a compiler run the driver's signal handling does not
        # know of, short as it is).
        cc = _cc_identity() if unsaved else None
        if cc is not None:
            forget_files()
            unsaved += [u for u in own if u[0] not in {f for f, _ in unsaved}]
            tu = ci.Index.create().parse(name, args=[*args, *_stand_ins(cc)],
                                         unsaved_files=unsaved, options=opts)
    except ci.TranslationUnitLoadError as e:
        raise ParseFailure(f"{source}: libclang could not load the file: {e}") from e
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        d = errors[0]
        loc = f"{d.location.file}:{d.location.line}" if d.location.file else str(source)
        raise ParseFailure(f"{loc}: libclang cannot parse this file ({d.spelling})")
    # A file that includes itself (`#include __FILE__` once per element type) compiles
    # one text several times: one rewrite of that text cannot serve each instance (the
    # insertions of every instance landed at the same offsets, nested: a probe's
    # program read past its array).
    me = os.path.realpath(str(source))
    for inc in tu.get_includes():
        if inc.include is not None and os.path.realpath(str(inc.include)) == me:
            where = inc.location.file.name if inc.location.file is not None else str(source)
            what = ("the file includes itself" if os.path.realpath(where) == me
                    else f"includes {source}, the file being compiled")
            raise ParseFailure(f"{where}:{inc.location.line}: {what}, so its text is "
                               "compiled more than once")
    remember_main(tu)
    return tu


def macro_ranges(top: list[ci.Cursor], main: str) -> list[tuple[int, int]]:
    """Byte ranges of the macro expansions in the file, by start: the text there is not
    the code."""
    return sorted((start_of(c), end_of(c)) for c in top
                  if c.kind == K.MACRO_INSTANTIATION and c.location.file
                  and str(c.location.file) == main)


def pragma_expansions(top: list[ci.Cursor], main: str) -> list[tuple[int, int]]:
    """Byte ranges of the file's macro expansions that make a pragma (`#define UNROLL
    _Pragma("GCC unroll 4")`, or a macro expanding to such a macro): a loop after one is
    annotated, as after a #pragma."""
    defs = {c.spelling: c for c in top if c.kind == K.MACRO_DEFINITION}
    memo: dict[str, bool] = {}

    def makes(name: str) -> bool:
        if name not in memo:
            memo[name] = False          # a macro naming itself
            d = defs.get(name)
            words = [t.spelling for t in d.get_tokens()][1:] if d is not None else []
            memo[name] = "_Pragma" in words or any(w in defs and makes(w) for w in words)
        return memo[name]

    return sorted((start_of(c), end_of(c)) for c in top
                  if c.kind == K.MACRO_INSTANTIATION and c.location.file
                  and str(c.location.file) == main and makes(c.spelling))


_FEATURE_MACROS = {"_FILE_OFFSET_BITS", "_TIME_BITS", "_FORTIFY_SOURCE", "_REENTRANT",
                   "_THREAD_SAFE"}


def _ends_cleanly(rest: bytes) -> bool:
    """Whether the text after a directive (to its line's end) ends the line: only white
    space and comments that close on it (`#include <x.h>  /* x */`), or a `//` comment
    not continued with a backslash.  A comment left open would take the next line in."""
    while True:
        at = rest.find(b"/*")
        line = rest.find(b"//")
        if at < 0 or 0 <= line < at:
            break
        close = rest.find(b"*/", at + 2)
        if close < 0:
            return False
        rest = rest[:at] + b" " + rest[close + 2:]
    code = rest.strip()
    return not rest.rstrip().endswith(b"\\") and (not code or code.startswith(b"//"))


def _is_feature_macro(name: str) -> bool:
    return (name in _FEATURE_MACROS or name.startswith("__STDC_WANT_")
            or (name.startswith("_") and name.endswith("_SOURCE")))


def header_places(top: list[ci.Cursor], data: bytes, main: str) -> list[int] | None:
    """Where the runtime's header may be included when the user's files define a feature
    test macro (`#define _GNU_SOURCE`, `_FILE_OFFSET_BITS`): the header includes
    <stdint.h>, and the C library reads those macros once, at its first header (included
    first, it left memmem() undeclared and off_t 32 bits).  The starts of the lines after
    the file's own #include directives and feature macro definitions at file scope.  None
    when the file defines no feature macro: its first line will do.  An empty list: there
    is no place, and the file must be compiled as written."""
    if not any(c.kind == K.MACRO_DEFINITION and not c.location.is_in_system_header
               and c.location.file is not None and _is_feature_macro(c.spelling)
               for c in top):
        return None
    mine = [c for c in top if c.location.file is not None and str(c.location.file) == main]
    code = [(start_of(c), end_of(c)) for c in mine
            if c.kind not in (K.INCLUSION_DIRECTIVE, K.MACRO_DEFINITION,
                              K.MACRO_INSTANTIATION)]
    places = []
    for c in mine:
        if c.kind != K.INCLUSION_DIRECTIVE and not (
                c.kind == K.MACRO_DEFINITION and _is_feature_macro(c.spelling)):
            continue
        end = end_of(c)
        if any(s <= end <= e for s, e in code):
            continue   # an #include inside a declaration or a function (X-macros)
        nl = data.find(b"\n", end)
        if nl < 0 or not _ends_cleanly(data[end:nl]):
            continue   # a comment or a continued line would take the next line in
        places.append(nl + 1)
    return places


def command_line_macros(clang_args: list[str]) -> dict[str, str]:
    """The macros `-DNAME=VALUE` (or `-D NAME`) defines: name -> value text."""
    out, args = {}, iter(clang_args)
    for a in args:
        if a == "-D":
            a = "-D" + next(args, "")
        if a.startswith("-D") and len(a) > 2:
            name, _, value = a[2:].partition("=")
            out[name.split("(")[0]] = value if "=" in a else "1"
    return out


_WORD = re.compile(r"[A-Za-z_]\w*")


def counting_macros(tu: ci.TranslationUnit, top: list[ci.Cursor], data: bytes,
                    clang_args: list[str] = ()) -> set[str]:
    """`__COUNTER__` and the names of the macros whose expansion reads it: text holding
    one of them gives another value each time it is repeated, and repeating it in a hint
    would change the values the program's own later uses get."""
    defined = command_line_macros(list(clang_args))
    seen = b"__COUNTER__" in data or any("__COUNTER__" in v for v in defined.values())
    for inc in tu.get_includes():
        if seen:
            break
        try:
            seen = b"__COUNTER__" in Path(str(inc.include)).read_bytes()
        except OSError:
            seen = True
    if not seen:
        return set()
    bodies: dict[str, set[str]] = {}
    for c in top:
        if c.kind == K.MACRO_DEFINITION:
            words = {t.spelling for t in c.get_tokens()
                     if t.kind == ci.TokenKind.IDENTIFIER} - {c.spelling}
            bodies.setdefault(c.spelling, set()).update(words)
    for name, value in defined.items():
        bodies.setdefault(name, set()).update(_WORD.findall(value))
    counting = {"__COUNTER__"}
    grew = True
    while grew:
        more = {name for name, words in bodies.items() if words & counting} - counting
        counting |= more
        grew = bool(more)
    return counting


class Repeatable:
    """Whether C text (an OpenMP clause's argument) means the same when evaluated a second
    time, its macros expanded: numbers, arithmetic and comparison operators, parentheses
    and names of variables only; no call, function-like macro, assignment, increment,
    comma, subscript, member, `__COUNTER__`, `__LINE__` or token paste."""

    _TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*|<<|>>|<=|>=|==|"
                        r"!=|&&|\|\||\S)")
    _SAFE = frozenset("+ - * / % ( ) < > & | ^ ~ ? : ! << >> <= >= == != && ||".split())
    _NEVER = frozenset({"__COUNTER__", "__LINE__", "_Pragma", "sizeof"})

    def __init__(self, top: list[ci.Cursor], clang_args: list[str]):
        self.defs = {c.spelling: c for c in top if c.kind == K.MACRO_DEFINITION}
        self.command_line = command_line_macros(clang_args)
        self.memo: dict[str, bool] = {}

    def __call__(self, text: str) -> bool:
        return self._tokens(self._TOKEN.findall(text))

    def _tokens(self, toks: list[str]) -> bool:
        for i, t in enumerate(toks):
            if t[0].isdigit():
                continue
            if t[0].isalpha() or t[0] == "_":
                if t in self._NEVER or (i + 1 < len(toks) and toks[i + 1] == "("):
                    return False   # a call, or a function-like macro
                if not self._macro(t):
                    return False
            elif t not in self._SAFE:
                return False
        return True

    def _macro(self, name: str) -> bool:
        """Whether name, as an object-like macro, expands to repeatable text (a name that
        is no macro is a variable's)."""
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = False   # a macro naming itself does not expand again
        if name in self.command_line:
            ok = self(self.command_line[name])
        elif name in self.defs:
            tokens = list(self.defs[name].get_tokens())
            function_like = len(tokens) > 1 and tokens[1].spelling == "(" and \
                tokens[1].extent.start.offset == tokens[0].extent.end.offset
            words = [t.spelling for t in tokens[1:]]
            ok = not function_like and "##" not in words and "#" not in words and \
                self._tokens(words)
        else:
            ok = True
        self.memo[name] = ok
        return ok


class Unrepeatable:
    """Whether a name, as a macro, expands to one of `roots` (by default `_Pragma` and
    `__COUNTER__`) or a token paste (which may make either), itself or through other
    macros: text holding it does not mean the same when compiled twice (with roots
    `__LINE__`: on another line).  Looked up lazily, for the names nests use."""

    def __init__(self, top: list[ci.Cursor], clang_args: list[str],
                 roots: tuple[str, ...] = ("_Pragma", "__COUNTER__"), quotes: bool = False):
        # Every definition of a name (an #undef and a new #define keep both)
        self.defs: dict[str, list[ci.Cursor]] = {}
        for c in top:
            if c.kind == K.MACRO_DEFINITION:
                self.defs.setdefault(c.spelling, []).append(c)
        self.command_line = command_line_macros(clang_args)
        self.memo: dict[str, bool] = dict.fromkeys(roots, True)
        # With `quotes`, a stringizing `#` counts as a paste does: text put into such a
        # macro's argument changes the strings it makes.
        self.pasting = ("##", "%:%:", "#", "%:") if quotes else ("##", "%:%:")

    def __call__(self, name: str) -> bool:
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = False   # a macro naming itself does not expand again
        words: list[str] = []
        pastes = False
        if name in self.command_line:
            value = self.command_line[name]
            words += _WORD.findall(value)
            pastes = any(p in value for p in self.pasting)
        for d in self.defs.get(name, ()):
            tokens = list(d.get_tokens())[1:]
            words += [t.spelling for t in tokens if t.kind == ci.TokenKind.IDENTIFIER]
            pastes = pastes or any(t.spelling in self.pasting for t in tokens)
        self.memo[name] = pastes or any(self(w) for w in words)
        return self.memo[name]
