"""The prefetch thread's code and the computation thread's call IDs (AASFP, Figure 2).

From a Slice (analysis/ioslice.py):
- a clone `__fs_ptf_F` of every function F the thread runs, placed at the end of the file
  under a `#line` giving F's lines: F's text with every statement outside the slice
  replaced by `;` (and as many newlines as it had), I/O calls turned into the runtime's
  (`read(fd, buf, n)` -> `foresight_pt_read(fd, NULL, n, SITE)`, the buffer kept only for a
  lead read), allocations into the thread's arena, exits into the thread's end, calls of
  the program's functions into calls of their clones, and file-scope variables into
  private copies in the thread's arena (`(*__fs_ptg_NAME_p)`, copied from the program's at
  the start of main);
- in the program itself (the computation thread), one insertion per read: its descriptor
  argument becomes `(foresight_pt_tick(__fs_ptx_clock, SITE), fd)`, which advances the call
  ID, and at the top of main the thread's start;
- at each sync point (a channel call: rand, time, a read of standard input), the program's
  call sends what it got (`foresight_pt_send_int(__fs_ptx_clock, SITE, rand())`, or
  `foresight_pt_send_scanf(__fs_ptx_clock, SITE, fmt, ...)`) and the thread's copy receives
  it (`foresight_pt_chan_int(SITE)`), never making the call itself.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from foresight.compiler.analysis.ioslice import (
    ALLOC,
    DESCRIPTOR_READS,
    EXITS,
    FORMATTED,
    IO_CALLS,
    NULL_TEXTS,
    RENAMED,
    TICKED,
    TLS_ACCESSORS,
    WRITES,
    Slice,
    channel,
    const_itself,
    getopt_state,
    io_name,
)
from foresight.compiler.options import decode_source, line_at
from foresight.compiler.program_ir import Function, Scope, StmtKind, VarKey
from foresight.compiler.rewrite.splice import Insertion, line_name

# The stdio reads the program makes through foresight_pt_stdio_NAME (ThreadWriter.stdio).
STDIO = frozenset({"fgets", "fread", "fscanf", "getline", "fgetc"})
# Generated names: __fs_ptf_F the clone of F, __fs_ptg_V the private copy of V, __fs_ptx_*
# the thread's own (no clone or copy can take these).
CLOCK = "__fs_ptx_clock"
MAIN_PARAMS = ("int", "char **", "char **")   # argc, argv, envp, as the thread keeps them
_SPECIFIERS = re.compile(r"^\s*((static|inline|__inline|__inline__|extern|_Noreturn|"
                         r"__attribute__\s*\(\(.*?\)\))\s+)*", re.S)


# The clones are the program's text with statements taken out: what is left may be unused,
# set but unused, an empty body or a case falling through, which -Wall -Wextra -Werror
# builds must not fail on.  -Wpragmas (gcc) and -Wunknown-warning-option (clang) keep
# either compiler quiet about the names only the other knows.
_QUIET = ['#pragma GCC diagnostic push'] + [
    f'#pragma GCC diagnostic ignored "{w}"' for w in (
        "-Wpragmas", "-Wunknown-warning-option", "-Wattributes", "-Wshadow", "-Wunused",
        "-Wunused-variable",
        "-Wunused-but-set-variable", "-Wunused-parameter", "-Wunused-label",
        "-Wunused-value", "-Wunused-function", "-Wempty-body", "-Wmaybe-uninitialized",
        "-Wuninitialized", "-Wimplicit-fallthrough", "-Wunreachable-code",
        "-Wreturn-type", "-Wnonnull")]


# The clones compute with predicted data: a store past a buffer of theirs is the fault
# net's to stop (pt_thread.c), not a stack protector's or a sanitizer's, whose abort() on
# the thread would leave glibc's abort lock held (the program's own abort() then hangs)
# or whose report is the program's stderr.  Where the compiler knows the attributes.
SAFE = "__fs_ptx_safe"
_SAFE_DEFINITION = [
    "#if defined(__has_attribute)",
    "#if __has_attribute(__no_stack_protector__) && __has_attribute(__no_sanitize__)",
    f"#define {SAFE} __attribute__((__no_stack_protector__, "
    '__no_sanitize__("address", "undefined")))',
    "#elif __has_attribute(__no_sanitize__)",
    f'#define {SAFE} __attribute__((__no_sanitize__("address", "undefined")))',
    "#endif",
    "#endif",
    f"#ifndef {SAFE}",
    f"#define {SAFE}",
    "#endif"]
# Writers into the thread's memory, called as the compiler's builtins in the clones: not
# through _FORTIFY_SOURCE's checking forms, whose failure is an abort() (above).
BUILTIN_WRITERS = frozenset({"memcpy", "memmove", "memset", "strcpy", "strncpy", "strcat",
                             "strncat", "sprintf", "snprintf"})


class Refused(Exception):
    """The slice cannot be written as C: (line, reason)."""

    def __init__(self, line: int, why: str):
        super().__init__(why)
        self.line, self.why = line, why


def clone_name(name: str) -> str:
    return f"__fs_ptf_{name}"


def copy_name(name: str) -> str:
    return f"__fs_ptg_{name}"


class ThreadWriter:
    def __init__(self, sl: Slice, data: bytes, path: str):
        self.sl, self.data, self.path = sl, data, path
        self.p = sl.program
        self.fns = {f.name: f for f in self.p.functions}
        self.sites: dict[tuple[str, int], int] = {}   # (function, call start) -> site
        for n, (f, c) in enumerate(sl.io_sites, 1):
            self.sites[(f, c.start)] = n
        self.chan_sites = {(f, c.start): n for n, (f, c) in enumerate(sl.chan_sites, 1)}
        self.received: list[tuple[str, object]] = []  # channel calls the clones make
        self.copies: dict[VarKey, str] = {}          # renamed file-scope variables
        self.uses_n = False                          # a clone calls foresight_pt_fscanf
        self.uses_iov = False                        # a clone calls __fs_ptx_iov
        self.thread_index = False                    # ... __fs_ptx_flags_K with its index
        self.sends_out = False                       # the program sends a result's object
        self.program_index = False                   # ... getopt_long's index, in its place
        # getopt_long calls whose option tables set flags, as the thread makes them:
        # (helper number, the table's variable, its flags' names where file-scope)
        self.flag_setters: list[tuple[int, VarKey, tuple[str, ...]]] = []
        self.getopt = False                          # getopt is a sync point
        self.getopt_names: set[str] = set()          # libc's optarg... the clones name
        # The program gives its descriptors readahead advice of its own: left as it is.
        self.advises = re.search(rb"\b(posix_fadvise|fadvise64|readahead)\b", data) is not None

    # The computation thread ------------------------------------------------------------

    def insertions(self) -> list[Insertion]:
        """Everything that goes into the file (raises Refused)."""
        anchored = "main" not in self.fns
        if anchored:
            params: list[str] = []
            code = self.anchored_code()     # first: it finds the sync points the thread has
        else:
            main = self.fns["main"]
            params = [v.name for v in main.params]
            if len(params) > 3:
                raise Refused(main.line, "main has more than three parameters")
            code = self.thread_code(params)
        out: list[Insertion] = []
        for f, c in self.received:
            out += self.send(f, c)
        for f, c in self.sl.io_sites:
            if io_name(c) and IO_CALLS[io_name(c)][0] in STDIO:
                out += self.stdio(f, c)
            elif io_name(c) and IO_CALLS[io_name(c)][0] == "read":
                out += self.fd_read(f, c)
            elif io_name(c) and IO_CALLS[io_name(c)][0] in TICKED:
                a = c.args[0] if c.args else None
                if a is None or a.start < 0:
                    raise Refused(c.line, f"the first argument of `{c.name}` is made by a "
                                  "macro")
                site = self.sites[(f, c.start)]
                if IO_CALLS[io_name(c)][0] in DESCRIPTOR_READS and not self.advises:
                    # Its descriptor: readahead off while the thread prefetches its calls.
                    out.append(Insertion(a.start, 1, 0,
                                         f"foresight_pt_tick_fd({CLOCK}, {site}, "))
                else:
                    out.append(Insertion(a.start, 1, 0,
                                         f"(foresight_pt_tick({CLOCK}, {site}), "))
                out.append(Insertion(a.end, 0, 0, ")"))
        first = min(f.start for f in self.p.functions)
        out.append(Insertion(first, 1, -1, self.declarations()))
        if anchored:
            for name in self.sl.anchors:
                out += self.anchor_entry(self.fns[name])
            out.append(Insertion(len(self.data), 1, 0, code))
            return out
        body = main.stmts[0]
        save = "".join(f"__fs_ptx_arg{i} = ({MAIN_PARAMS[i]})({name}); "
                       for i, name in enumerate(params))
        out.append(Insertion(body.start + 1, 1, -1,
                             f" {save}{CLOCK} = foresight_pt_start(__fs_ptx_init, "
                             f"__fs_ptx_run);"))
        out.append(Insertion(len(self.data), 1, 0, code))
        return out

    def stdio(self, f: str, c) -> list[Insertion]:
        """A stdio read the thread mirrors, made through foresight.h's foresight_pt_stdio_NAME
        (CLOCK, SITE, [NAME,] args...): its tick where it is a covered call, and what it
        read sent to the thread when its stream is standard input (a variable may hold
        stdin: `FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin`)."""
        name = c.callee or ""
        if self.data[c.start:c.start + len(name)] != name.encode():
            raise Refused(c.line, f"the call of `{name}` is made by a macro")
        paren = self.data.index(b"(", c.start + len(name))
        site = self.sites[(f, c.start)]
        extra = f"{name}, " if IO_CALLS[name][0] == "getline" else ""
        return [Insertion(c.start, 1, 0, "foresight_pt_stdio_"),
                Insertion(paren + 1, 1, 0, f"{CLOCK}, {site}, {extra}")]

    def fd_read(self, f: str, c) -> list[Insertion]:
        """`read(fd, buf, n)`, the program's own call (fortified where it is built so), as
        `foresight_pt_fd_sent(CLOCK, SITE, read(foresight_pt_fd_tick(CLOCK, SITE, ADVISE,
        fd), foresight_pt_fd_buf(buf), n))` (foresight.h): ticked (its descriptor's
        readahead advised, unless the file advises its own), and what it read sent to the
        thread when fd is 0 (a variable may hold standard input: `int in = argc > 1 ?
        open(...) : 0`)."""
        if len(c.args) < 2 or any(a.start < 0 for a in c.args[:2]):
            raise Refused(c.line, f"an argument of `{c.name}` is made by a macro")
        site = self.sites[(f, c.start)]
        advise = 0 if self.advises else 1
        fd, buf = c.args[0], c.args[1]
        return [Insertion(c.start, 1, 0, f"foresight_pt_fd_sent({CLOCK}, {site}, "),
                Insertion(fd.start, 1, 0, f"foresight_pt_fd_tick({CLOCK}, {site}, {advise}, "),
                Insertion(fd.end, 0, 0, ")"),
                Insertion(buf.start, 1, 0, "foresight_pt_fd_buf("),
                Insertion(buf.end, 0, 0, ")"),
                Insertion(c.end, 0, 0, ")")]

    def send(self, f: str, c) -> list[Insertion]:
        """The program's side of a sync point: its call, then what it got sent."""
        kind = channel(c)
        site = self.chan_sites[(f, c.start)]
        name = c.callee
        head = f"{CLOCK}, {site}, "
        if kind in ("getopt", "getopt_long"):   # its result, what it left in optarg...
            vec = c.args[1].text.strip() if len(c.args) > 1 else ""
            vec = vec if re.fullmatch(r"[A-Za-z_]\w*", vec) else "0"
            index = _long_index(c)
            out = []
            if (f, c.start) in self.sl.long_flags and index in NULL_TEXTS:
                # The thread needs the option's index to set its flag: the program's call
                # gets a place for it ((void)(NULL), &__fs_ptx_li), which changes nothing.
                self.program_index = True
                index = "&__fs_ptx_li"
                out = [Insertion(c.args[4].start, 1, 1, "((void)("),
                       Insertion(c.args[4].end, 0, 1, "), &__fs_ptx_li)")]
            return out + [Insertion(c.start, 1, 0, f"__fs_ptx_send_getopt({site}, "),
                          Insertion(c.end, 0, 0, f", {index}, {vec})")]
        if kind in ("out0", "out1"):
            # (r = CALL(..., (out = (void *)(ARG)), ...), send(r, out, sizeof *(ARG))):
            # the object ARG points to, after the call, sent with its result.
            a = _out_arg(c, kind)
            if a.text.strip() in NULL_TEXTS:
                return [Insertion(c.start, 1, 0, f"foresight_pt_send_long({head}"),
                        Insertion(c.end, 0, 0, ")")]
            self.sends_out = True
            return [Insertion(c.start, 1, 0, "(__fs_ptx_r = "),
                    Insertion(a.start, 1, 1, "(__fs_ptx_out = (void *)("),
                    Insertion(a.end, 0, 1, "))"),
                    Insertion(c.end, 0, 0, f", foresight_pt_send_out({head}__fs_ptx_r, "
                              f"__fs_ptx_out, sizeof *({a.text})))")]
        if kind in ("int", "long", "double", "time", "fgets"):
            wrap = "long" if kind == "time" else kind
            return [Insertion(c.start, 1, 0, f"foresight_pt_send_{wrap}({head}"),
                    Insertion(c.end, 0, 0, ")")]
        # scanf, fscanf, read, fread, getline: foresight_pt_send_NAME(CLOCK, SITE,
        # [NAME,] args...), the name made by text put before the call's own.
        paren = self.data.index(b"(", c.start + len(name))
        extra = f"{name}, " if kind in ("read", "fread", "getline") else ""
        return [Insertion(c.start, 1, 0, "foresight_pt_send_"),
                Insertion(paren + 1, 1, 0, head + extra)]

    def declarations(self) -> str:
        saved = "".join(f"static {MAIN_PARAMS[i]} __fs_ptx_arg{i}; "
                        for i in range(len(self.fns["main"].params))) if "main" in self.fns \
            else ""
        getopt = ("static char **__fs_ptx_argv_at, **__fs_ptx_argv_orig, "
                  "**__fs_ptx_argv_copy; static unsigned long __fs_ptx_argv_n; "
                  "static int __fs_ptx_send_getopt(unsigned, int, const int *, "
                  "char *const *); "
                  if self.getopt else "")
        out = "static void *__fs_ptx_out; static long __fs_ptx_r; " if self.sends_out else ""
        out += "static int __fs_ptx_li; " if self.program_index else ""
        if "main" not in self.fns:
            return f"static struct foresight_pt_clock *{CLOCK}; {out}"
        return (f"static struct foresight_pt_clock *{CLOCK}; {saved}{getopt}{out}"
                "static void __fs_ptx_init(void); static void __fs_ptx_run(void); ")

    # The prefetch thread ---------------------------------------------------------------

    def thread_code(self, params: list[str]) -> str:
        clones = [self.clone(self.fns[f]) for f in sorted(self.sl.kept,
                                                          key=lambda n: self.fns[n].start)]
        self.getopt = any(channel(c) in ("getopt", "getopt_long") for _, c in self.received)
        protos = self.prototypes()
        # The private copies of file-scope variables live in the thread's arena (guarded:
        # a wrong index into one cannot reach the program's variables beside it).
        copies, init = [], []
        for key, name in sorted(self.copies.items(), key=lambda kv: kv[1]):
            orig = key[2]
            copies.append(f"static __typeof__({orig}) *{name}_p;")
            init += [f"    {name}_p = foresight_pt_malloc(sizeof({orig}));",
                     f"    if ({name}_p == 0) {{ __fs_ptx_ok = 0; return; }}",
                     f"    __builtin_memcpy((void *){name}_p, (const void *)&{orig}, "
                     f"sizeof({orig}));"]
        # argv and envp: copied too, before main's first statement can change them in
        # place (`*strchr(argv[1], ':') = 0`), so the thread reads strings of its own.
        vectors = [i for i in (1, 2) if i < len(params)]
        if vectors:
            copies += [
                "static char **__fs_ptx_strings(char **v)", "{",
                "    unsigned long n = 0;", "    while (v != 0 && v[n] != 0)", "        n++;",
                "    char **c = foresight_pt_malloc((n + 1) * sizeof *c);",
                "    for (unsigned long i = 0; c != 0 && i < n; i++) {",
                "        unsigned long len = __builtin_strlen(v[i]) + 1;",
                "        if ((c[i] = foresight_pt_malloc(len)) == 0)", "            return 0;",
                "        __builtin_memcpy(c[i], v[i], len);", "    }",
                "    if (c != 0)", "        c[n] = 0;", "    return c;", "}"]
            for i in vectors:
                init += [f"    if (__fs_ptx_arg{i} != 0 && (__fs_ptx_arg{i} = "
                         f"__fs_ptx_strings(__fs_ptx_arg{i})) == 0) {{ __fs_ptx_ok = 0; "
                         "return; }"]
        if self.uses_n:
            copies.append("static int __fs_ptx_n;")
        if self.uses_iov:
            # readv and preadv: a predicted read of the bytes the thread's iovecs ask for
            # (one covered call; descriptor 0 is the program's standard input, which the
            # thread does not read: a failed pread, not the channel of read(0, ...)).
            # A count or a total the kernel refuses (EINVAL): a failed pread, its call ID
            # used up as the program's call uses its own.
            copies += [
                "#include <sys/uio.h>",
                f"static {SAFE} long __fs_ptx_iov(int h, const struct iovec *v, int n,",
                "                                 long long off, int at, unsigned site)", "{",
                "    unsigned long b = 0;",
                "    if (n < 0 || n > 1024)",
                "        return foresight_pt_pread(h, (void *)0, 0, -1, site);",
                "    for (int i = 0; i < n; i++) {",
                "        if (v[i].iov_len > (~0ul >> 1) - b)",
                "            return foresight_pt_pread(h, (void *)0, 0, -1, site);",
                "        b += v[i].iov_len;", "    }",
                "    if (at || h == 0)",
                "        return foresight_pt_pread(h, (void *)0, b, at ? off : 0, site);",
                "    return foresight_pt_read(h, (void *)0, b, site);", "}"]
        copies += self.getopt_code(params, init)
        copies += self.flag_code()
        args = ", ".join(f"__fs_ptx_arg{i}" for i in range(len(params)))
        out = ["", "/* foresight cc --prefetch-thread: the prefetch thread (AASFP) */",
               *_QUIET, *_SAFE_DEFINITION, *protos, *copies, "static int __fs_ptx_ok = 1;",
               "static void __fs_ptx_init(void)", "{", *init, "}",
               "static void __fs_ptx_run(void)", "{",
               f"    if (__fs_ptx_ok) (void){clone_name('main')}({args});", "}"]
        text = "\n".join(out) + "\n" + "\n".join(clones) + "\n#pragma GCC diagnostic pop\n"
        return ("\n" if not self.data.endswith(b"\n") else "") + text

    # Anchored runs (a file without main) ---------------------------------------------

    def anchor_params(self, fn: Function) -> list[tuple[str, str, str]]:
        """Each parameter of anchored function FN as (name, kind, member type): kind
        "fd" (a descriptor its reads use: the thread's own handle of the file), "string"
        (a `const char *` the thread reads: copied), "pointer" (an address the thread does
        not read through: passed as it is) or "value"."""
        from foresight.compiler.analysis.ioslice import _const_string

        head = decode_source(self.data[fn.start:fn.stmts[0].start])
        if "..." in head:
            raise Refused(fn.line, f"`{fn.name}`, where the thread's runs would start, "
                          "takes variable arguments")
        out = []
        for v in fn.params:
            if not v.name:
                raise Refused(fn.line, f"`{fn.name}`, where the thread's runs would start, "
                              "has a parameter without a name")
            t = " ".join(v.type.split())
            if "(*" in t.replace(" ", "") and ")(" in t.replace(" ", ""):
                raise Refused(fn.line, f"`{fn.name}`, where the thread's runs would start, "
                              f"takes a function pointer (`{v.name}`)")
            if re.fullmatch(r"(const\s+)?(FILE|struct _IO_FILE)\s*\*(\s*const)?", t):
                raise Refused(fn.line, f"`{fn.name}`, where the thread's runs would start, "
                              f"takes a stream (`{v.name}`), which the thread cannot follow")
            if v.is_pointer or v.is_array:
                kind = "string" if _const_string(t) and v.key in self.sl.pointees else \
                    "pointer"
                out.append((v.name, kind, "void *"))
                continue
            if "[" in t or "(" in t:
                raise Refused(fn.line, f"`{fn.name}`, where the thread's runs would start, "
                              f"takes `{v.name}` of a type the anchor cannot copy")
            member = re.sub(r"\b(const|volatile|register)\b", " ", t)
            kind = "fd" if self.descriptor(fn, v.name, set()) else "value"
            out.append((v.name, kind, " ".join(member.split())))
        return out

    def descriptor(self, fn: Function, name: str, seen: set[str]) -> bool:
        """Whether parameter NAME of FN is the descriptor of one of the slice's I/O calls
        in FN (its first argument), or is passed as such to a function of the file."""
        if fn.name in seen:
            return False
        seen = seen | {fn.name}
        for sid in self.sl.kept.get(fn.name, ()):
            for c in fn.stmts[sid].calls:
                if _descriptor_of(c) == name:
                    return True
                g = self.fns.get(c.callee or "")
                if g is not None and g.name in self.sl.kept:
                    for a, p in zip(c.args, g.params, strict=False):
                        if _bare(a.text) == name and self.descriptor(g, p.name, seen):
                            return True
        return False

    def descriptor_globals(self) -> list[str]:
        """The copied file-scope variables (their copies' names) the slice's I/O calls
        take as their descriptor: each run adopts the program's file behind them."""
        names = {_descriptor_of(c) for f in self.sl.kept for sid in self.sl.kept[f]
                 for c in self.fns[f].stmts[sid].calls}
        return sorted(copy for key, copy in self.copies.items() if key[2] in names)

    def anchor_entry(self, fn: Function) -> list[Insertion]:
        """Before FN, the type of its arguments as the anchor copies them; at its body's
        start, the anchor (foresight_pt_anchor) with them."""
        r = fn.name
        params = self.anchor_params(fn)
        members = " ".join(f"{t} a{i};" for i, (_, _, t) in enumerate(params)) or "char a;"
        decl = (f"struct __fs_ptx_{r}_args {{ {members} }}; "
                f"static void __fs_ptx_{r}_init(const void *); "
                f"static void __fs_ptx_{r}_run(void); ")
        values = ", ".join(f"(void *)(uintptr_t)({n})" if t == "void *" else f"({n})"
                           for n, _, t in params) or "0"
        body = fn.stmts[0]
        call = (f" {{ struct __fs_ptx_{r}_args __fs_ptx_aa = {{{values}}}; {CLOCK} = "
                f"foresight_pt_anchor(__fs_ptx_{r}_init, __fs_ptx_{r}_run, &__fs_ptx_aa); }}")
        return [Insertion(fn.start, 1, -1, decl), Insertion(body.start + 1, 1, -1, call)]

    def anchored_code(self) -> str:
        """The thread's code for a file without main: the clones, and per anchored
        function its init (on the program's thread: its arguments and the file-scope
        variables the slice reads copied into the thread's arena) and its run (the
        clone called with them; the program's descriptors as the thread's own handles)."""
        if not self.sl.anchors:
            raise Refused(0, "no function here where the thread's runs could start")
        clones = [self.clone(self.fns[f]) for f in sorted(self.sl.kept,
                                                          key=lambda n: self.fns[n].start)]
        if self.received:
            f, c = self.received[0]
            raise Refused(c.line, f"`{c.name}` is a sync point, which a file without main "
                          "cannot have: its runs would share one channel with all the "
                          "program's threads")
        protos = self.prototypes()
        # The copies are made by the first run's init and kept (the arena goes back to
        # where that init left it as each run ends: pt_arena.c); each later run copies the
        # program's values again, but for those over 64 KiB (a buffer, most likely, which
        # the thread fills itself), copied once.
        copies, globals_init = [], []
        for key, name in sorted(self.copies.items(), key=lambda kv: kv[1]):
            orig = key[2]
            copies.append(f"static __typeof__({orig}) *{name}_p;")
            globals_init += [
                f"    if ({name}_p == 0) {{",
                f"        {name}_p = foresight_pt_malloc(sizeof({orig}));",
                f"        if ({name}_p == 0) {{ __fs_ptx_ok = 0; return; }}",
                f"        __builtin_memcpy((void *){name}_p, (const void *)&{orig}, "
                f"sizeof({orig}));",
                f"    }} else if (sizeof({orig}) <= 65536) {{",
                f"        __builtin_memcpy((void *){name}_p, (const void *)&{orig}, "
                f"sizeof({orig}));", "    }"]
        # Descriptors in file-scope variables (`static int dbfd`, opened by another
        # function): the thread's own handle of the same file, at the program's offset.
        adopt_globals = []
        for name in self.descriptor_globals():
            copies.append(f"static long long {name}_o;")
            globals_init.append(f"    {name}_o = *{name}_p > 0 ? "
                                f"foresight_pt_offset((int)*{name}_p) : 0;")
            adopt_globals.append(f"    if (*{name}_p > 0) *{name}_p = "
                                 f"foresight_pt_adopt((int)*{name}_p, {name}_o);")
        if self.uses_n:
            copies.append("static int __fs_ptx_n;")
        if self.uses_iov:
            raise Refused(0, "readv or preadv in a file without main (not anchored yet)")
        runs = []
        for r in self.sl.anchors:
            fn = self.fns[r]
            params = self.anchor_params(fn)
            init = ["    __fs_ptx_ok = 1;",
                    f"    __fs_ptx_{r}_a = *(const struct __fs_ptx_{r}_args *)p;"]
            args = []
            for i, (_, kind, _) in enumerate(params):
                if kind == "string":
                    init += [f"    __fs_ptx_{r}_s{i} = foresight_pt_strdup("
                             f"(const char *)__fs_ptx_{r}_a.a{i});",
                             f"    if (__fs_ptx_{r}_a.a{i} != 0 && __fs_ptx_{r}_s{i} == 0) "
                             "{ __fs_ptx_ok = 0; return; }"]
                    copies.append(f"static const char *__fs_ptx_{r}_s{i};")
                    args.append(f"(void *)(uintptr_t)__fs_ptx_{r}_s{i}")
                elif kind == "fd":
                    # Standard input is the channel's (the program sends what it reads).
                    init.append(f"    __fs_ptx_{r}_o{i} = __fs_ptx_{r}_a.a{i} == 0 ? 0 : "
                                f"foresight_pt_offset(__fs_ptx_{r}_a.a{i});")
                    copies.append(f"static long long __fs_ptx_{r}_o{i};")
                    args.append(f"__fs_ptx_{r}_a.a{i} == 0 ? 0 : foresight_pt_adopt("
                                f"__fs_ptx_{r}_a.a{i}, __fs_ptx_{r}_o{i})")
                else:
                    args.append(f"__fs_ptx_{r}_a.a{i}")
            init += globals_init
            runs += [f"static struct __fs_ptx_{r}_args __fs_ptx_{r}_a;",
                     f"static void __fs_ptx_{r}_init(const void *p)", "{", *init, "}",
                     f"static void __fs_ptx_{r}_run(void)", "{",
                     "    if (!__fs_ptx_ok)", "        return;", *adopt_globals,
                     f"    (void){clone_name(r)}({', '.join(args)});", "}"]
        out = ["", "/* foresight cc --prefetch-thread: the prefetch thread (AASFP), its runs "
               "anchored at " + ", ".join(self.sl.anchors) + " */",
               *_QUIET, *_SAFE_DEFINITION, *protos, *copies, "static int __fs_ptx_ok = 1;",
               *runs]
        text = "\n".join(out) + "\n" + "\n".join(clones) + "\n#pragma GCC diagnostic pop\n"
        return ("\n" if not self.data.endswith(b"\n") else "") + text

    def prototypes(self) -> list[str]:
        """Each clone's declaration, on one line."""
        return [" ".join(re.sub(r"/\*.*?\*/|//[^\n]*", " ", self.header(self.fns[f]),
                                flags=re.S).split()) + ";" for f in sorted(self.sl.kept)]

    def getopt_code(self, params: list[str], init: list[str]) -> list[str]:
        """Where getopt is a sync point: the thread's optarg, optind, optopt and opterr
        (as the program's at main's entry), the two sides of the call (foresight.h:
        foresight_pt_send_getopt, foresight_pt_chan_getopt), and main's argv in its
        original order, the program's pointers and the thread's strings; adds their
        set-up to `init`, which must not have copied argv yet."""
        if not (self.getopt or self.getopt_names):
            return []
        start = {"optarg": "0", "optind": "1", "optopt": "'?'", "opterr": "1"}
        named = self.getopt_names | ({"optarg", "optind", "optopt"} if self.getopt else set())
        out = [f"static {'char *' if n == 'optarg' else 'int '}__fs_ptx_{n} = {start[n]};"
               for n in sorted(named)]
        init[:0] = [f"    __fs_ptx_{n} = {n};" for n in sorted(self.getopt_names)
                    if n != "optarg"]
        if not self.getopt:
            return out
        argv = "__fs_ptx_arg1" if len(params) > 1 else "0"
        out += ["static char **__fs_ptx_pointers(char **v)", "{",
                "    unsigned long n = 0;", "    while (v != 0 && v[n] != 0)", "        n++;",
                "    char **c = v != 0 ? foresight_pt_malloc((n + 1) * sizeof *c) : 0;",
                "    for (unsigned long i = 0; c != 0 && i <= n; i++)", "        c[i] = v[i];",
                "    return c;", "}",
                "static int __fs_ptx_send_getopt(unsigned site, int r, const int *li, "
                "char *const *vec)", "{",
                f"    return foresight_pt_send_getopt({CLOCK}, site, r, li, vec, optarg, "
                "optind, optopt, __fs_ptx_argv_at, __fs_ptx_argv_orig, __fs_ptx_argv_n);",
                "}",
                "static int __fs_ptx_getopt(unsigned site, int *li)", "{",
                "    return foresight_pt_chan_getopt(site, li, &__fs_ptx_optarg, "
                f"&__fs_ptx_optind, &__fs_ptx_optopt, {argv}, __fs_ptx_argv_copy, "
                "__fs_ptx_argv_n);", "}"]
        if len(params) > 1:
            init[:0] = ["    __fs_ptx_argv_at = __fs_ptx_arg1;",
                        "    __fs_ptx_argv_orig = __fs_ptx_pointers(__fs_ptx_arg1);",
                        "    while (__fs_ptx_argv_orig != 0 && "
                        "__fs_ptx_argv_orig[__fs_ptx_argv_n] != 0)",
                        "        __fs_ptx_argv_n++;"]
            init.append("    __fs_ptx_argv_copy = __fs_ptx_pointers(__fs_ptx_arg1);")
        return out

    def header(self, fn: Function) -> str:
        """The clone's declarator: `static`, F's return type and parameters, its name
        `__fs_ptf_F`; as many newlines as F's had (its body keeps F's line numbers)."""
        body = fn.stmts[0]
        head = decode_source(self.data[fn.start:body.start])
        specifiers = _SPECIFIERS.match(head)
        gone = specifiers.group(0) if specifiers else ""
        head = head[len(gone):]
        m = re.search(r"\b" + re.escape(fn.name) + r"\s*\(", head)
        if m is None:
            raise Refused(fn.line, f"the definition of `{fn.name}` is not spelled out "
                          "(a macro makes its name)")
        head = head[:m.start()] + clone_name(fn.name) + head[m.start() + len(fn.name):]
        # (comments between the parameters and the body do not count)
        bare = re.sub(r"/\*.*?\*/|//[^\n]*", " ", head, flags=re.S).rstrip()
        if bare.endswith(";") or not bare.endswith(")"):
            raise Refused(fn.line, f"`{fn.name}` has an old-style definition or "
                          "attributes after its parameters")
        # `static` where F's own text does not already make it so through a macro
        # (`#define STATIC static`: a second one would not compile).
        spelled = re.search(r"\bstatic\b", gone) is not None
        static = "static " if spelled or not fn.internal else ""
        return f"{static}{SAFE} " + "\n" * gone.count("\n") + head

    def clone(self, fn: Function) -> str:
        kept = self.sl.kept[fn.name]
        edits: list[tuple[int, int, str]] = []
        removed: list[tuple[int, int]] = []
        for st in fn.stmts[1:]:
            if st.id in kept or st.parent not in kept:
                continue
            gap = self.data[st.start:st.end]
            edits.append((st.start, st.end, ";" + "\n" * gap.count(b"\n")))
            removed.append((st.start, st.end))

        void_main = fn.name == "main" and re.match(
            r"\s*void\b", _SPECIFIERS.sub("", decode_source(self.data[fn.start:fn.stmts[0].start])))
        for sid in sorted(kept):
            st = fn.stmts[sid]
            if fn.name == "main" and st.kind == StmtKind.RETURN:
                edits.append((st.start, st.end, "return;" if void_main else "return 0;"))
                removed.append((st.start, st.end))
            elif st.kind == StmtKind.RETURN and fn.name not in self.sl.needed:
                # No caller's slice reads the value: a zero of its type, not its
                # computation (which may call what the thread cannot run).
                text = decode_source(self.data[st.start:st.end])
                m = re.fullmatch(r"return\b(.*?);?", text.strip(), re.S)
                if m and m.group(1).strip():
                    expr = m.group(1).strip()
                    end = "\n" if "//" in expr else " "    # a comment ends at its line
                    # (1 ? e : e: a function or an array decays, qualifiers go)
                    typ = f"1 ? ({expr}{end}) : ({expr}{end})"
                    edits.append((st.start, st.end, "{ static __typeof__(" + typ
                                  + ") __fs_ptx_z; return __fs_ptx_z; }" + "\n" * max(
                                      0, text.count("\n") - typ.count("\n"))))
                    removed.append((st.start, st.end))
        # Removed ranges never overlap (each is a statement whose parent is kept, or a
        # kept return of main, which holds none of them): sorted, one search per offset.
        removed.sort()
        starts = [r[0] for r in removed]

        def live(o: int) -> bool:
            i = bisect_right(starts, o) - 1
            return i < 0 or not (removed[i][0] <= o < removed[i][1])

        # A call the thread must make inside the text of a statement it removes: a
        # macro's statement whose text holds the file's own (`#define CHECK(x) if ((x) <
        # 0) exit(1)` under an `if` with an `else`, which the macro's `if` takes).
        for sid in kept:
            st = fn.stmts[sid]
            for c in st.calls:
                if c.start < 0 or not (io_name(c) or channel(c) or c.callee in self.fns):
                    continue
                if any(a <= c.start < b and not (a <= st.start and st.end <= b)
                       for a, b in removed):
                    raise Refused(c.line, f"`{c.name}` is in the text of a statement a "
                                  "macro makes that the thread does not run")

        # A statement run as its one call (`printf("%zd", pread(...))`): the rest goes.
        for sid in sorted(kept):
            e = self.sl.reduced.get((fn.name, sid))
            if e is not None:
                st = fn.stmts[sid]
                before = self.data[st.start:e.start].count(b"\n")
                after = self.data[e.end:st.end].count(b"\n")
                edits += [(st.start, e.start, "{ (void)(" + "\n" * before),
                          (e.end, st.end, "); }" + "\n" * after)]
        call_edits = []
        sync = []
        for sid in sorted(kept):
            st = fn.stmts[sid]
            e = self.sl.reduced.get((fn.name, sid))
            for c in st.calls:
                if e is not None and not (e.start <= c.start and c.end <= e.end):
                    continue    # the text around the one call goes
                if live(c.start):
                    call_edits += self.call(fn, c)
                    if (fn.name, c.start) in self.chan_sites:
                        sync.append(c)
        edits += call_edits
        # A sync point inside text another edit replaces (`exit(rand())`) is not made by
        # the thread: the program must not send for it either.
        self.received += [(fn.name, c) for c in sync if not any(
            a <= c.start and c.end <= b and b - a > c.end - c.start for a, b, _ in edits)]
        # Text a call's edit replaces (a predicted read's buffer, open's mode) is gone:
        # a global named there needs no copy.
        replaced = sorted((a, b) for a, b, _ in (*call_edits, *edits) if b > a)
        globals_ = {v.key: v for v in fn.globals}
        # A static local's initial value must be a constant: not a copy of a global.
        statics = [(st.start, st.end) for sid in kept
                   if (st := fn.stmts[sid]).kind == StmtKind.DECL
                   and any(v.key in st.defs and v.scope == Scope.STATIC for v in fn.locals)]
        # A statement run as its one call: what lies outside the call is gone.
        alone = [(fn.stmts[sid], e) for sid in kept
                 if (e := self.sl.reduced.get((fn.name, sid))) is not None]
        for s0, e0, key, spelled in fn.global_refs:
            if not live(s0) or any(a <= s0 and e0 <= b for a, b in replaced) or any(
                    st.start <= s0 and e0 <= st.end and not (e.start <= s0 and e0 <= e.end)
                    for st, e in alone):
                continue
            var = globals_.get(key)
            if var is not None and getopt_state(var):
                # libc's: the thread's own, set by its getopt calls (getopt_code)
                self.getopt_names.add(var.name)
                edits.append((s0, e0, f"__fs_ptx_{var.name}"))
                continue
            if var is None or const_itself(var.type):
                continue
            if any(a <= s0 < b for a, b in statics):
                raise Refused(line_at(self.data, s0), f"a static variable's initial value "
                              f"names `{var.name}`, which the thread reads from a copy")
            if not spelled:
                raise Refused(fn.line, f"`{var.name}` is named through a macro in "
                              f"`{fn.name}`")
            if "[]" in var.type.replace(" ", ""):
                raise Refused(var.line, f"`{var.name}` is an array of unknown size")
            self.copies[key] = copy_name(var.name)
            edits.append((s0, e0, f"(*{copy_name(var.name)}_p)"))
        body = fn.stmts[0]
        text = _apply(self.data, body.start, fn.end, edits)
        line = line_at(self.data, fn.start)
        return f"#line {line} {line_name(self.path)}\n{self.header(fn)}{text}"

    def receive(self, fn: Function, c, kind: str, site: int, ren) -> list[tuple[int, int, str]]:
        need = {"time": 1, "out0": 1, "out1": 2, "fgets": 3, "read": 3, "scanf": 1,
                "fscanf": 2, "fread": 4, "getline": 3}.get(kind, 0)
        if len(c.args) < need or any(a.start < 0 for a in c.args):
            raise Refused(c.line, f"an argument of `{c.callee}` is made by a macro")
        flags = self.sl.long_flags.get((fn.name, c.start))
        if flags is not None:
            # __fs_ptx_flags_K(r, index, table): the flag the program's call set, set in
            # the thread's memory too (the table's own pointers where the table is the
            # clone's; the thread's copies of file-scope flags where it is file-scope).
            key, names = flags
            number = len(self.flag_setters)
            self.flag_setters.append((number, key, names))
            index = _long_index(c)
            if index in NULL_TEXTS:
                self.thread_index = True
                index = "&__fs_ptx_li_t"
            # (a table of the clone's own is passed; a file-scope one the helper names)
            table = "0" if names else c.args[3].text.strip()
            return [(c.start, c.end, f"__fs_ptx_flags_{number}(__fs_ptx_getopt({site}, "
                                     f"{index}), {index}, {table})")]
        return _receive_edits(c, kind, site, ren)

    def flag_code(self) -> list[str]:
        """The helpers that set what getopt_long's flags point to on the thread."""
        out = ["static int __fs_ptx_li_t;"] if self.thread_index else []
        for number, key, names in self.flag_setters:
            where = "f"
            if names:
                # A file-scope table holds the program's addresses: each becomes the
                # thread's copy of that variable, or nothing (a flag the slice never
                # reads: no copy to set).
                where = "(int *)0"
                for n in reversed(names):
                    copy = next((c for k, c in self.copies.items()
                                 if k[2] == n and k in self.sl.globals), None)
                    mine = f"&(*{copy}_p)" if copy else "(int *)0"
                    where = f"f == &{n} ? {mine} : {where}"
            table = key[2] if key not in self.copies else f"(*{self.copies[key]}_p)"
            out += [f"static int __fs_ptx_flags_{number}(int r, const int *li, "
                    f"const struct option *t)", "{",
                    *([f"    if (t == 0) t = {table};"] if names else []),
                    "    if (t != 0 && r == 0 && li != 0 && *li >= 0 && t[*li].flag != 0) {",
                    "        int *f = t[*li].flag;",
                    f"        int *mine = {where};",
                    "        if (mine != 0)",
                    "            *mine = t[*li].val;",
                    "    }",
                    "    return r;", "}"]
        return out

    def call(self, fn: Function, c) -> list[tuple[int, int, str]]:
        name = c.callee or ""
        if name in TLS_ACCESSORS:
            return []       # errno, isdigit...: the macro's text stays as it is
        if not self.data[c.start:c.start + len(name)].decode(errors="replace") == name:
            raise Refused(c.line, f"the call of `{name}` is made by a macro")
        close = self.data.rfind(b")", c.start, c.end)
        ren = (c.start, c.start + len(name))
        kind = channel(c)
        site = self.chan_sites.get((fn.name, c.start))
        if kind and site is not None:
            return self.receive(fn, c, kind, site, ren)
        io = io_name(c)
        if io:
            kind, buf = IO_CALLS[io]
            site = self.sites.get((fn.name, c.start))
            if site is None:
                raise Refused(c.line, f"`{name}` outside the slice")
            out = [(*ren, f"foresight_pt_{kind}")]
            if any(a.start < 0 for a in c.args):
                raise Refused(c.line, f"an argument of `{name}` is made by a macro")
            if kind == "open":
                if len(c.args) < 2:
                    raise Refused(c.line, "open without flags")
                if len(c.args) > 2:
                    out.append((c.args[1].end, c.args[-1].end, ""))
            if buf >= 0 and buf < len(c.args) and not self.sl.lead(c):
                out.append((c.args[buf].start, c.args[buf].end, "(void *)0"))
            if kind in ("readv", "preadv"):
                # readv(fd, iov, n [, off]) -> __fs_ptx_iov(fd, iov, n, OFF, AT, SITE).
                if len(c.args) != (4 if kind == "preadv" else 3):
                    raise Refused(c.line, f"`{name}` with {len(c.args)} arguments")
                self.uses_iov = True
                tail = ", 1" if kind == "preadv" else ", 0, 0"
                out = [(*ren, "__fs_ptx_iov"), (close, close, f"{tail}, {site}")]
            elif kind == "fgetc":
                out.append((close, close, f", {int(self.sl.lead(c))}, {site}"))
            elif kind == "fscanf":
                # The runtime parses the thread's copy of the text with vsscanf; the %n
                # added to the format says how far the match went.
                if len(c.args) < 2 or not c.args[1].text.lstrip().startswith('"'):
                    raise Refused(c.line, "fscanf with a format that is not a string literal")
                out = [(c.start, c.start, "(__fs_ptx_n = -1, "), (*ren, "foresight_pt_fscanf"),
                       (c.args[0].end, c.args[0].end, f", {site}, &__fs_ptx_n"),
                       (c.args[1].end, c.args[1].end, ' "%n"'),
                       (close, close, ", &__fs_ptx_n"), (c.end, c.end, ")")]
                self.uses_n = True
            else:
                out.append((close, close, f", {site}"))
            return out
        if name in WRITES:
            kind, data = WRITES[name]
            if kind == "done":      # ftruncate, fsync: 0, as when they succeed
                return [(c.start, c.end, "0")]
            if any(a.start < 0 for a in c.args):
                raise Refused(c.line, f"an argument of `{name}` is made by a macro")
            out = [(*ren, f"foresight_pt_{kind}")]
            if name in FORMATTED:   # fprintf(f, fmt, ...) -> foresight_pt_fprintf(f)
                if len(c.args) > data:
                    out.append((c.args[data - 1].end if data else c.args[0].start,
                                c.args[-1].end, ""))
            elif 0 <= data < len(c.args) - 1:     # the data goes, with its comma
                out.append((c.args[data].start, c.args[data + 1].start, ""))
            for lo, hi, _ in out[1:]:   # (fprintf's: the slicer refused already)
                for st in fn.stmts:
                    for c2 in st.calls:
                        if lo <= c2.start < hi and (io_name(c2) or channel(c2)
                                                    or c2.callee in self.fns):
                            raise Refused(c.line, f"`{c2.name}` is in the data of "
                                          f"`{name}`, which the thread does not pass")
            return out
        if name in EXITS:
            return [(c.start, c.end, "foresight_pt_exit()")]
        if name in ALLOC:
            return [(*ren, f"foresight_pt_{name}")]
        if name in RENAMED:
            return [(*ren, RENAMED[name])]
        if name in BUILTIN_WRITERS:
            return [(*ren, f"__builtin_{name}")]
        if name in self.fns and name in self.sl.kept:
            return [(*ren, clone_name(name))]
        return []


def _bare(text: str) -> str:
    """An argument's text without casts and parentheses around one name: `(int)fd` ->
    `fd`."""
    t = text.strip()
    while True:
        m = re.fullmatch(r"\(\s*[A-Za-z_][\w\s]*\)\s*(.+)", t, re.S) or re.fullmatch(
            r"\((.+)\)", t, re.S)
        if m is None:
            return t
        t = m.group(1).strip()


def _descriptor_of(c) -> str | None:
    """The name a descriptor-taking I/O call (read, pread, readv, preadv, lseek, close)
    gets as its descriptor, or None."""
    k = io_name(c)
    if k and IO_CALLS[k][0] in ("read", "pread", "readv", "preadv", "lseek", "close") \
            and c.args:
        return _bare(c.args[0].text)
    return None


def _receive_edits(c, kind: str, site: int, ren: tuple[int, int]) -> list[tuple[int, int, str]]:
    """The thread's side of a sync point: the call becomes a receive of the program's
    value (its arguments stay where the receive stores through them)."""
    if kind in ("int", "long", "double"):
        return [(c.start, c.end, f"foresight_pt_chan_{kind}({site})")]
    if kind in ("getopt", "getopt_long"):
        return [(c.start, c.end, f"__fs_ptx_getopt({site}, {_long_index(c)})")]
    if kind == "time":
        return [(*ren, "foresight_pt_chan_time"), (c.args[0].start, c.args[0].start, f"{site}, ")]
    if kind in ("out0", "out1"):   # CALL(args) -> foresight_pt_chan_out_N(SITE, SIZE, args)
        a = _out_arg(c, kind)
        size = "0" if a.text.strip() in NULL_TEXTS else f"sizeof *({a.text})"
        return [(*ren, f"foresight_pt_chan_{kind}"),
                (c.args[0].start, c.args[0].start, f"{site}, {size}, ")]
    if kind == "fgets":
        return [(*ren, "foresight_pt_chan_fgets"), (c.args[2].start, c.args[2].end, str(site))]
    if kind == "read":
        return [(*ren, "foresight_pt_chan_read"), (c.args[0].start, c.args[0].end, str(site))]
    if kind in ("fread", "getline"):   # (..., stdin) -> (..., SITE)
        last = c.args[-1]
        return [(*ren, f"foresight_pt_chan_{kind}"), (last.start, last.end, str(site))]
    if kind == "scanf":
        return [(*ren, "foresight_pt_chan_scanf"), (c.args[0].start, c.args[0].start, f"{site}, ")]
    # fscanf(stdin, fmt, ...): the stream goes.
    return [(c.start, c.args[1].start, f"foresight_pt_chan_scanf({site}, ")]


def _out_arg(c, kind: str):
    """The argument an `outN` channel call stores its result's object through."""
    return c.args[int(kind[3:])]


def _long_index(c) -> str:
    """getopt_long's pointer to the index of the option found (`&i`, or NULL: checked by
    the slicer), evaluated again after the call; `0` for getopt."""
    return c.args[4].text.strip() if len(c.args) > 4 else "0"


def _apply(data: bytes, lo: int, hi: int, edits: list[tuple[int, int, str]]) -> str:
    """data[lo:hi] with edits (start, end, text); an edit inside another's range is
    dropped (the outer one replaces it)."""
    # At one offset: insertions first, then the longest replacement (which drops what
    # lies inside it).
    edits = sorted(edits, key=lambda e: (e[0], e[1] != e[0], -(e[1] - e[0])))
    out, pos = [], lo
    for s, e, t in edits:
        if s < pos or s < lo or e > hi:
            if s >= pos or e > pos:
                if s < pos and e > pos:
                    raise Refused(0, "overlapping rewrites")
            continue
        out.append(decode_source(data[pos:s]))
        out.append(t)
        pos = e
    out.append(decode_source(data[pos:hi]))
    return "".join(out)


def thread_insertions(sl: Slice, data: bytes, path: str) -> list[Insertion]:
    return ThreadWriter(sl, data, path).insertions()
