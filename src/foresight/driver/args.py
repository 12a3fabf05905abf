"""cc-compatible command lines: response files, foresight's own options, inputs and modes.

Only what the driver must understand is interpreted (the mode, the output, the inputs and
their language, the dependency-file options, the preprocessor options libclang needs);
every other argument is kept verbatim, in order, for the underlying compiler.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from foresight.errors import CompilerError, UsageError

# gcc/clang options whose value may be the next argument.
TAKES_VALUE = frozenset({
    "-o", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter",
    "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-MF", "-MT", "-MQ",
    "-x", "-L", "-l", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-Xclang", "-T", "-u",
    "-e", "-z", "-A", "-aux-info", "--param", "--sysroot", "-wrapper", "-dumpbase",
    "-dumpdir", "-target", "--target", "-arch", "-MJ", "-include-pch",
})
# Options that change what libclang must see to parse the file as cc does.
PREPROCESSOR_VALUE = ("-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
                      "-idirafter", "-isysroot", "--sysroot")
PREPROCESSOR_FLAGS = frozenset({"-ansi", "-nostdinc", "-undef", "-m32", "-m64", "-mx32",
                                "-fopenmp", "-funsigned-char", "-fsigned-char",
                                "-fno-unsigned-char", "-fno-signed-char", "-trigraphs",
                                # the sizes and layouts the hints compute with
                                "-fshort-wchar", "-fno-short-wchar", "-fshort-enums",
                                "-fno-short-enums", "-fpack-struct", "-malign-double",
                                "-mno-align-double", "-mlong-double-64", "-mlong-double-80",
                                "-mlong-double-128",
                                # macros code may test (__FAST_MATH__, __OPTIMIZE__, __AVX2__)
                                "-ffast-math", "-fno-fast-math"})
# The same, given with a value after '=' or joined (-O2, -march=native, -fpack-struct=4).
PREPROCESSOR_PREFIXES = ("-std=", "-I", "-D", "-U", "-isystem", "-iquote", "-idirafter",
                         "--sysroot=", "-O", "-march=", "-fpack-struct=", "-fopenmp=")
DEPENDENCY_VALUE = frozenset({"-MF", "-MT", "-MQ"})
DEPENDENCY_FLAGS = frozenset({"-MD", "-MMD", "-MP", "-MG"})

# foresight's own options: (name, value name or None for a flag, one line of --help).
OWN_OPTIONS: tuple[tuple[str, str | None, str], ...] = (
    ("--no-prefetch", None, "no hints: the same pipeline, the baseline build"),
    ("--no-indirect", None, "hints for direct references only (no a[b[i]] look-ahead)"),
    ("--prefetch-thread", None, "a prefetch thread sliced from the program's read()s runs "
     "ahead of it (AASFP)"),
    ("--color", None, "page-coloring summaries of OpenMP static loops for the runtime "
     "(CDPC; FORESIGHT_COLOR=sim)"),
    ("--trace-mem", None, "record every load and store for `foresight cachesim -- PROG` "
     "(built with clang 16+; FORESIGHT_TRACE_MEM=FILE)"),
    ("--report", None, "per loop nest, what was found and decided (on stderr)"),
    ("--report-json", "FILE", "the report as JSON, one entry per loop nest (a directory "
     "or a name with % for one file per C input)"),
    ("--emit-c", "DIR", "write the compiled text of each C input to DIR, under its relative "
     "path (DIR/a/x.c)"),
    ("--fs-mem", "SIZE", "memory the analysis assumes (default 64M), e.g. 256M"),
    ("--fs-page", "SIZE", "page size, a power of two (default 4K)"),
    ("--fs-block", "SIZE", "bytes per block prefetch, a power of two (default 64K)"),
    ("--fs-preset", "NAME", "adaptive (default) or paper (Eq. 1 distance, 4-page blocks)"),
    ("--fs-latency", "CYCLES", "paper preset: I/O latency in cycles (default 100000)"),
    ("--fs-no-sparse-rows", None, "no indirect look-ahead across the rows of a CSR matrix"),
)
# --fs-sparse-rows is the default since the look-ahead got its own distance; still accepted.
OWN_FLAGS = frozenset({name for name, value, _ in OWN_OPTIONS if value is None}
                      | {"--fs-sparse-rows"})
OWN_VALUE = frozenset({name for name, value, _ in OWN_OPTIONS if value is not None})
PRESETS = ("adaptive", "paper")
# -std= values (and -ansi) of C90: foresight.h needs C99 (`inline`), so no hints.
C90_STANDARDS = frozenset({"c89", "c90", "gnu89", "gnu90", "iso9899:1990",
                           "iso9899:199409"})


def help_text(compiler: str) -> str:
    """`foresight cc --help`: foresight's own options; cc's are cc's."""
    lines = ["usage: foresight cc [FORESIGHT OPTIONS] [CC OPTIONS] FILES...",
             "", "cc with I/O prefetch and release hints.  Foresight's options:"]
    for name, value, text in OWN_OPTIONS:
        left = f"{name} {value}" if value else name
        lines.append(f"  {left:<22} {text}")
    lines += ["", f"Every other option is the C compiler's: $FORESIGHT_CC (now: {compiler}); "
              f"see `{compiler} --help`."]
    return "\n".join(lines)


def c90_standard(args: list[str]) -> str | None:
    """The option that selects C90 (`-std=c89`, `-ansi`), if the last one in effect does."""
    chosen: str | None = None
    for a in args:
        if a in ("-ansi", "--ansi") or a.startswith(("-std=", "--std=")):
            chosen = a  # gcc: the last one wins
    if chosen is None:
        return None
    return chosen if chosen.endswith("-ansi") or \
        chosen.split("=", 1)[1] in C90_STANDARDS else None


@dataclass
class Input:
    path: str        # as written on the command line
    lang: str | None  # the -x language in effect, None: by suffix
    index: int       # position in CommandLine.args

    @property
    def is_c(self) -> bool:
        if self.lang not in (None, "none"):
            return self.lang == "c"
        return self.path.endswith(".c")

    @property
    def is_object(self) -> bool:
        """Linker input: an object or a library (cc does not compile it)."""
        return self.lang in (None, "none") and (
            self.path.endswith((".o", ".a", ".so", ".lo", ".obj")) or ".so." in self.path)

    @property
    def stem(self) -> str:
        """cc's base for default output names: dir/foo.c -> foo."""
        name = Path(self.path).name
        return name.rsplit(".", 1)[0] if "." in name[1:] else name


@dataclass
class CommandLine:
    args: list[str]                      # cc's arguments, response files expanded
    own: dict[str, str | bool] = field(default_factory=dict)
    inputs: list[Input] = field(default_factory=list)
    output: str | None = None            # -o
    mode: str = "link"                   # "link", "-c", "-S", "-E" (also -M/-MM, syntax-only)
    dep_file: str | None = None          # -MF
    dep_targets: bool = False            # -MT/-MQ given
    dep_gen: bool = False                # -MD/-MMD given
    wp_dep_file: str | None = None       # -Wp,-MD,FILE (Linux kernel style)
    response_files: list[str] = field(default_factory=list)  # @file, read as arguments

    @property
    def c_inputs(self) -> list[Input]:
        return [i for i in self.inputs if i.is_c]


def expand_response_files(argv: list[str], depth: int = 0,
                          read: list[str] | None = None) -> list[str]:
    """@file arguments, as gcc reads them (a missing file is left as a plain argument);
    the files read are appended to `read`."""
    out: list[str] = []
    for a in argv:
        if a.startswith("@") and len(a) > 1 and Path(a[1:]).is_file():
            if depth > 20:
                raise CompilerError(f"{a}: response files nested too deeply")
            try:
                words = shlex.split(Path(a[1:]).read_text(errors="surrogateescape"))
            except ValueError as e:
                raise CompilerError(f"{a}: {e}") from e
            except OSError as e:
                raise CompilerError(f"{a}: cannot read: {e.strerror}") from e
            if read is not None:
                read.append(a[1:])
            out += expand_response_files(words, depth + 1, read)
        else:
            out.append(a)
    return out


def _split_own(argv: list[str]) -> tuple[dict[str, str | bool], list[str]]:
    own: dict[str, str | bool] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        key = a.split("=", 1)[0]
        if a in OWN_FLAGS:
            own[a] = True
        elif key in OWN_VALUE:
            if "=" in a:
                own[key] = a.split("=", 1)[1]
            elif i + 1 < len(argv) and (argv[i + 1] == "-" or not argv[i + 1].startswith("-")):
                own[key] = argv[i + 1]
                i += 1
            elif i + 1 < len(argv):
                # `--emit-c -O2 -c x.c` would write into a directory named -O2: an option
                # in a value's place is the user's slip (`--emit-c=-d` names it on purpose).
                raise UsageError(f"{a} needs a value, not the option {argv[i + 1]} "
                                 f"(write {a}=VALUE for a value that starts with -)")
            else:
                raise UsageError(f"{a} needs a value")
        else:
            rest.append(a)
        i += 1
    return own, rest


def _short_output(args: list[str]) -> list[str]:
    """cc's long spellings of -o (`--output=FILE`, `--output FILE`) as -o FILE, the one
    form the driver reads and rewrites."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--output="):
            out += ["-o", a[len("--output="):]]
        elif a == "--output" and i + 1 < len(args):
            out += ["-o", args[i + 1]]
            i += 1
        else:
            out.append(a)
        i += 1
    return out


def parse(argv: list[str]) -> CommandLine:
    response_files: list[str] = []
    own, args = _split_own(expand_response_files(argv, read=response_files))
    args = _short_output(args)
    cl = CommandLine(args=args, own=own, response_files=response_files)
    modes: set[str] = set()
    lang: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if a in TAKES_VALUE and value is not None:
            if a == "-o":
                cl.output = value
            elif a == "-x":
                lang = value
            elif a == "-MF":
                cl.dep_file = value
            elif a in ("-MT", "-MQ"):
                cl.dep_targets = True
            i += 2
            continue
        if a == "-" or not a.startswith("-"):
            cl.inputs.append(Input(a, lang, i))
        elif a.startswith("-o"):
            cl.output = a[2:]
        elif a.startswith("-x"):
            lang = a[2:]
        elif a.startswith("-MF"):
            cl.dep_file = a[3:]
        elif a.startswith(("-MT", "-MQ")):
            cl.dep_targets = True
        elif a in ("-MD", "-MMD"):
            cl.dep_gen = True
        elif a.startswith(("-Wp,-MD,", "-Wp,-MMD,")):
            cl.wp_dep_file = a.split(",", 2)[2]
        elif a in ("-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "-###"):
            modes.add(a)
        i += 1
    if modes & {"-E", "-M", "-MM", "-fsyntax-only", "-###"}:
        cl.mode = "-E"  # nothing to transform: cc runs unchanged
    elif "-S" in modes:
        cl.mode = "-S"
    elif "-c" in modes:
        cl.mode = "-c"
    return cl


def preprocessor_args(args: list[str]) -> list[str]:
    """The arguments that change what libclang sees: -I -D -U -include -std= ..."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in PREPROCESSOR_VALUE and i + 1 < len(args):
            out += [a, args[i + 1]]
            i += 2
            continue
        if a in TAKES_VALUE:
            i += 2
            continue
        if a in PREPROCESSOR_FLAGS or a.startswith(PREPROCESSOR_PREFIXES):
            out.append(a)
        i += 1
    return out


def strict_aliasing(args: list[str]) -> bool:
    """Whether the program may be taken to follow C's aliasing rules (a store of one type
    changes no object of another): unless the last of -f[no-]strict-aliasing is
    -fno-strict-aliasing, which makes type punning through pointers defined GNU C.
    (gcc exploits the rules from -O2 up; a program compiled at -O1 is still C.)"""
    on = True
    for a in args:
        if a in ("-fstrict-aliasing", "-fno-strict-aliasing"):
            on = a == "-fstrict-aliasing"
    return on


def reassociates(args: list[str]) -> bool:
    """Whether cc may reorder floating-point arithmetic (-ffast-math, -Ofast,
    -fassociative-math, -funsafe-math-optimizations; the last of each pair decides, and an
    -O level after -Ofast takes back its fast math)."""
    ofast = fast = assoc = unsafe = False
    for a in args:
        if a.startswith("-O"):
            ofast = a == "-Ofast"
        elif a in ("-ffast-math", "-fno-fast-math"):
            fast = a == "-ffast-math"
        elif a in ("-fassociative-math", "-fno-associative-math"):
            assoc = a == "-fassociative-math"
        elif a in ("-funsafe-math-optimizations", "-fno-unsafe-math-optimizations"):
            unsafe = a == "-funsafe-math-optimizations"
    return ofast or fast or assoc or unsafe


def own_definitions(args: list[str]) -> bool:
    """Whether a call of a function defined in the file runs that definition (as gcc
    assumes when it inlines it): not in position-independent code for a shared object
    (the last of -fPIC/-fpic and -fno-pic/-fno-PIC), where another definition may
    interpose, unless -fno-semantic-interposition says it may not."""
    pic, interposing = False, True
    for a in args:
        if a in ("-fPIC", "-fpic", "-fno-PIC", "-fno-pic"):
            pic = a in ("-fPIC", "-fpic")
        elif a in ("-fsemantic-interposition", "-fno-semantic-interposition"):
            interposing = a == "-fsemantic-interposition"
    return not (pic and interposing)


def inlines_called_once(args: list[str]) -> bool:
    """Whether cc inlines a `static` function called once at compile time, so that one
    forced inline where a nest's copy calls it twice builds the same (rewrite/emit
    .forced_inline): an optimisation level of 1 or more but -Og, and none of -fno-inline,
    -fno-inline-functions-called-once (the last of each pair decides), nor link-time
    optimisation (-flto), whose inlining errors would surface at the link, where the
    original can no longer be compiled instead."""
    level, inline, once, lto = "0", True, True, False
    for a in args:
        if a.startswith("-O"):
            level = a[2:] or "1"
        elif a in ("-finline", "-fno-inline"):
            inline = a == "-finline"
        elif a in ("-finline-functions-called-once", "-fno-inline-functions-called-once"):
            once = a == "-finline-functions-called-once"
        elif a == "-flto" or a.startswith("-flto="):
            lto = True
        elif a == "-fno-lto":
            lto = False
    return level not in ("0", "g") and inline and once and not lto


def compile_options(own: dict[str, str | bool], args: list[str] | None = None):
    """foresight's own options as CompileOptions, with what cc's arguments `args` let the
    analysis assume; a bad value is a UsageError (exit 2)."""
    from foresight.compiler.options import CompileOptions

    preset = str(own.get("--fs-preset", "adaptive"))
    if preset not in PRESETS:
        raise UsageError(f"--fs-preset {preset!r}: expected adaptive or paper")
    kw: dict = {"prefetch": "--no-prefetch" not in own, "preset": preset,
                "indirect": "--no-indirect" not in own,
                "prefetch_thread": "--prefetch-thread" in own,
                "color": "--color" in own,
                "sparse_rows": "--fs-no-sparse-rows" not in own,
                "strict_aliasing": strict_aliasing(args or []),
                "own_definitions": own_definitions(args or []),
                "inline_once": inlines_called_once(args or []),
                "reassociates": reassociates(args or [])}
    if "--fs-mem" in own:
        kw["memory_bytes"] = _size("--fs-mem", own["--fs-mem"])
    if "--fs-page" in own:
        kw["page_size"] = _size("--fs-page", own["--fs-page"], power_of_two=True)
    if "--fs-block" in own:
        kw["block_size"] = _size("--fs-block", own["--fs-block"], power_of_two=True)
    if "--fs-latency" in own:
        v = str(own["--fs-latency"])
        try:
            cycles = int(v.replace("_", ""))
        except ValueError:
            cycles = 0
        if cycles <= 0:
            raise UsageError(f"--fs-latency {v!r}: expected a positive number "
                             "of cycles (e.g. 100000)")
        kw["latency_cycles"] = cycles
    opts = CompileOptions(**kw)
    if opts.block_size < opts.page_size:
        raise UsageError(f"--fs-block {opts.block_size} is smaller than the "
                         f"page size {opts.page_size}")
    return opts


def _size(opt: str, value: str | bool, power_of_two: bool = False) -> int:
    from foresight.units import parse_size

    text = str(value)
    try:
        n = parse_size(text)
    except (ValueError, UsageError):
        n = 0
    if n <= 0:
        raise UsageError(f"{opt} {text!r}: not a size (expected e.g. 4K, 256M, 8G)")
    if power_of_two and n & (n - 1):
        raise UsageError(f"{opt} {text!r}: must be a power of two")
    return n
