"""The prefetch thread's slice of a program (AASFP, "Application-Specific File Prefetching",
Section 4; issue 24).

PT, the statements the prefetch thread runs, is built to a fixed point over the whole file
(Sections 4.1 and 4.2 together):
- every I/O call of the table below in a function `main` reaches, and every call of a
  function that makes one (the two threads must make the same calls in the same order:
  the call IDs pair them);
- related_set(x) of every variable an I/O call's descriptor, offset or size reads (not
  its buffer), and of every variable a kept statement reads: each statement that defines
  it (file-scope variables in every function, and the calls of those functions);
- the if/switch/loop statements containing a kept statement, with what their conditions
  read, the jumps that leave them (break, continue, goto, return, exit) and a switch's
  case labels;
- the declarations of the variables kept statements name, and every declaration of a type.

What the thread may do is checked here, not hoped for: it runs only the library calls of
the tables below (I/O calls become the runtime's predicted or lead reads, allocations its
private arena, exits the thread's end); it writes only its own memory, so every store of a
kept statement must be to a variable of its own (locals of the clones, private copies of
file-scope variables) or through a pointer that can only point to such memory
(`private`, below); it reads through other pointers only where they hold strings (`char *`,
main's argv).  Where any of this fails, the file gets no thread and the reason says where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from foresight.compiler.program_ir import (
    Arg,
    Call,
    Function,
    Program,
    Scope,
    Stmt,
    StmtKind,
    Var,
    VarKey,
)

# The I/O calls the thread mirrors: name -> (kind, index of the buffer argument or -1).
# The kind names the runtime's call (foresight_pt_KIND).
IO_CALLS: dict[str, tuple[str, int]] = {
    "open": ("open", -1), "open64": ("open", -1),
    "read": ("read", 1), "pread": ("pread", 1), "pread64": ("pread", 1),
    # Vectored reads are always predicted: their buffers are what the iovecs point to,
    # which the thread cannot tell its own from the program's (the iovec array, read for
    # the lengths, is an ordinary argument).
    "readv": ("readv", -1), "preadv": ("preadv", -1), "preadv64": ("preadv", -1),
    "lseek": ("lseek", -1), "lseek64": ("lseek", -1),
    "close": ("close", -1),
    "fopen": ("fopen", -1), "fopen64": ("fopen", -1), "fclose": ("fclose", -1),
    "fread": ("fread", 0), "fgetc": ("fgetc", -1), "getc": ("fgetc", -1),
    "fgets": ("fgets", 0), "fscanf": ("fscanf", -1), "getline": ("getline", -1),
    "fseek": ("fseek", -1), "fseeko": ("fseeko", -1), "fseeko64": ("fseeko", -1),
    "ftell": ("ftell", -1), "ftello": ("ftello", -1), "ftello64": ("ftello", -1),
    "rewind": ("rewind", -1),
}
# The calls that advance the call ID on both threads.
TICKED = frozenset({"read", "pread", "readv", "preadv", "fread", "fgets", "fscanf", "getline"})
# The calls on a descriptor whose readahead the computation thread's tick may turn off.
DESCRIPTOR_READS = frozenset({"read", "pread", "readv", "preadv"})
# (getc is mirrored for its offset and its byte, not counted: a tick per byte would cost a
# getc loop more than its reads.)
# A declaration that defines a struct, union or enum type (kept with its variables).
_TAG = re.compile(r"\b(struct|union|enum)\b[^;{}]*\{")
# Calls that make a program's order of I/O calls something one thread cannot replay.
UNSLICEABLE = {
    "pthread_create": "I/O on several threads", "thrd_create": "I/O on several threads",
    "setjmp": "a non-local jump", "_setjmp": "a non-local jump", "sigsetjmp": "a non-local jump",
    "longjmp": "a non-local jump", "siglongjmp": "a non-local jump",
    "dup2": "descriptor renumbering", "dup3": "descriptor renumbering",
    "chdir": "relative paths would name other files", "fchdir":
    "relative paths would name other files", "chroot": "paths would name other files",
    "seccomp": "a filter of its own, which the prefetch thread's filter would conflict with",
    "unshare": "it needs a process of one thread", "setns": "it needs a process of one thread",
}
# `sizeof x`, `sizeof(x)`, `sizeof x[0]`: names that are not evaluated.
_SIZEOF = re.compile(rb"\bsizeof\b\s*(\([^()]*\)|[A-Za-z_][A-Za-z0-9_]*(\s*\[[^\]]*\])*)")
# Signals whose handlers the prefetch thread's fault net needs.
FAULT_SIGNALS = frozenset({"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"})
SIGNAL_CALLS = frozenset({"signal", "sigaction", "sigset", "bsd_signal", "sysv_signal"})
# Reads whose data the thread always reads itself (text it parses).
ALWAYS_LEAD = frozenset({"fgets", "fscanf", "getline"})
# Sorting and searching the thread's own arrays: (index of the comparison function).
SORTS = {"qsort": 3, "bsearch": 4}
# Calls the thread makes under another name, not I/O calls of their own.
RENAMED = {"feof": "foresight_pt_feof", "ferror": "foresight_pt_ferror",
           "strtok": "foresight_pt_strtok",   # its own position in its own string
           "sscanf": "foresight_pt_sscanf",
           # on its own handle, by the system call (libc's confuses ThreadSanitizer)
           "fstat": "foresight_pt_fstat", "fstat64": "foresight_pt_fstat"}
# ... of which these store through every argument from this index on.
STORES_FROM = {"sscanf": 2, "strtok_r": 2}
EXITS = frozenset({"exit", "_exit", "_Exit", "abort", "quick_exit"})
# What a macro that only ends the process may call besides an exit (the thread drops it).
_REPORTS = frozenset({"perror", "fprintf", "printf", "puts", "fputs", "fputc", "putc",
                      "strerror", "__errno_location", "fflush", "__assert_fail", "err",
                      "errx", "warn", "warnx"})
# glibc's accessors behind `errno` and <ctype.h>'s macros (isdigit, tolower...): the
# calling thread's errno, the locale's read-only tables.
TLS_ACCESSORS = frozenset({"__errno_location", "__ctype_b_loc", "__ctype_tolower_loc",
                           "__ctype_toupper_loc"})
ALLOC = frozenset({"malloc", "calloc", "realloc", "free"})
# Library functions with no effect but their value (and, for WRITES_INTO, stores through
# the argument it gives, which must then be the thread's own memory).
PURE = frozenset({
    "abs", "labs", "llabs", "atoi", "atol", "atoll", "atof", "strtol", "strtoul", "strtoll",
    "strtoull", "strtod", "strtof", "strlen", "strnlen", "strcmp", "strncmp", "strchr",
    "strrchr", "strstr", "strcspn", "strspn", "strpbrk", "memcmp", "memchr", "isdigit",
    "isalpha", "isspace", "isalnum", "isupper", "islower", "isxdigit", "ispunct", "isprint",
    "isgraph", "iscntrl", "isblank", "toupper", "tolower", "sqrt", "sqrtf", "floor", "ceil",
    "fabs", "fmod", "pow", "exp", "log", "log2", "log10", "sin", "cos", "tan", "atan",
    "atan2", "round", "lround", "trunc", "fmin", "fmax", "floorf", "ceilf", "fabsf",
    "roundf", "lrint", "rint", "hypot",
})
WRITES_INTO = {"memcpy": 0, "memmove": 0, "memset": 0, "strcpy": 0, "strncpy": 0, "strcat": 0,
               "strncat": 0, "sprintf": 0, "snprintf": 0,
               # the string it cuts (the thread's own; NULL: the one it cut last)
               "strtok": 0, "strtok_r": 0,
               # a file's size and kind (the thread's own descriptor, or the path)
               "fstat": 1, "stat": 1, "lstat": 1, "fstat64": 1, "stat64": 1, "lstat64": 1}


# The program's writes, where the slice needs their result (`if (write(out, b, n) != n)
# return 1;`): the thread writes nothing and predicts that each succeeds whole
# (foresight_pt_KIND).  name -> (kind, index of the data argument, which is not passed).
# fprintf's and printf's data is the format and everything after it (FORMATTED).
WRITES = {"write": ("write", 1), "pwrite": ("pwrite", 1), "pwrite64": ("pwrite", 1),
          "fwrite": ("fwrite", 0), "fputs": ("fputs", 0), "fputc": ("fputc", -1),
          "putc": ("fputc", -1), "fflush": ("fflush", -1), "ftruncate": ("done", -1),
          "ftruncate64": ("done", -1), "fsync": ("done", -1), "fdatasync": ("done", -1),
          "fprintf": ("fprintf", 1), "printf": ("printf", 0)}
FORMATTED = frozenset({"fprintf", "printf"})


# An assignment, ++ or -- in C text, and the string and character literals to take out of
# it first (`fprintf(log, "i=%d", i--)`).
_ASSIGNS = re.compile(rb"\+\+|--|(?<![=!<>])=(?!=)")
_LITERALS = re.compile(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


def write_data(c: Call) -> set[int]:
    """The arguments of a write (WRITES) the thread never passes: its data."""
    kind = WRITES.get(c.callee or "")
    if kind is None or kind[1] < 0:
        return set()
    if c.callee in FORMATTED:
        return set(range(kind[1], len(c.args)))
    return {kind[1]} if kind[1] < len(c.args) else set()

# The channel (Section 4.1's sync points, send_XXX/receive_XXX): library calls whose
# results the thread takes from the program instead of making them again, which would
# change the program (rand's sequence, standard input's bytes) or answer differently
# (time).  name -> kind (the runtime's foresight_pt_send_KIND / foresight_pt_chan_KIND).
CHANNEL = {"rand": "int", "random": "long", "lrand48": "long", "mrand48": "long",
           "drand48": "double", "clock": "long", "time": "time", "getchar": "int",
           "scanf": "scanf", "getopt": "getopt", "getopt_long": "getopt_long",
           "getopt_long_only": "getopt_long",
           # results stored through a pointer: the kind names the argument ("out0": the
           # first), whose object travels with the result (the thread's copy of the call
           # stores the program's there)
           "gettimeofday": "out0", "clock_gettime": "out1"}
# What getopt leaves in libc's variables (the thread's copies of the call take them from
# the channel into its own: rewrite/prefetch_thread.py renames them in its code).
GETOPT_STATE = frozenset({"optarg", "optind", "optopt", "opterr"})
# ... and reads of standard input: name -> (index of the stream or descriptor, kind).
CHANNEL_STDIN = {"getc": (0, "int"), "fgetc": (0, "int"), "fgets": (2, "fgets"),
                 "fscanf": (0, "fscanf"), "read": (0, "read"), "fread": (3, "fread"),
                 "getline": (2, "getline")}
# The arguments each kind stores through: (first, last + 1), None for "to the end".
CHANNEL_OUTPUTS = {"time": (0, 1), "out0": (0, 1), "out1": (1, 2), "fgets": (0, 1),
                   "read": (1, 2), "scanf": (1, None),
                   "fscanf": (2, None), "getopt_long": (4, 5), "fread": (0, 1),
                   "getline": (0, 2)}
NULL_TEXTS = frozenset({"NULL", "0", "(void *)0", "((void *)0)", "(void*)0", "((void*)0)"})


def channel(call: Call) -> str | None:
    """The channel kind of a library call the thread receives (None: not one)."""
    if call.callee in CHANNEL:
        return CHANNEL[call.callee]
    if call.callee in CHANNEL_STDIN:
        i, kind = CHANNEL_STDIN[call.callee]
        stdin = ("0", "STDIN_FILENO") if kind == "read" else ("stdin",)
        if i < len(call.args) and call.args[i].text.strip() in stdin:
            return kind
    return None


def channel_outputs(call: Call) -> range:
    """The indexes of the arguments a channel call stores through."""
    first, end = CHANNEL_OUTPUTS.get(channel(call) or "", (0, 0))
    return range(first, min(len(call.args), len(call.args) if end is None else end))


@dataclass
class Slice:
    """What slice() found: the kept statements per function, or why there is no thread."""

    program: Program
    kept: dict[str, set[int]] = field(default_factory=dict)   # function -> statement ids
    related: set[VarKey] = field(default_factory=set)
    pointees: set[VarKey] = field(default_factory=set)         # pointers read through
    globals: set[VarKey] = field(default_factory=set)          # file-scope variables it names
    refusals: list[tuple[int, str]] = field(default_factory=list)   # (line, reason)
    io_sites: list[tuple[str, Call]] = field(default_factory=list)  # (function, call), in order
    chan_sites: list[tuple[str, Call]] = field(default_factory=list)  # sync points, in order
    value_used: set[int] = field(default_factory=set)   # starts of getc calls whose byte matters
    # Functions whose returned value the slice reads; another clone's kept returns give a
    # zero of their type (the value is computed by what the thread does not run).
    needed: set[str] = field(default_factory=set)
    # Statements the thread runs as their one call it must make (`printf("%zd\n",
    # pread(...))` -> the pread): (function, statement id) -> that call.
    reduced: dict[tuple[str, int], Call] = field(default_factory=dict)
    # getopt_long calls whose option table sets flags (`{"verbose", 0, &verbose, 1}`):
    # (function, call start) -> the table's variable and, where it is a file-scope table
    # (its flag pointers are the program's addresses), the flag variables' names.
    long_flags: dict[tuple[str, int], tuple[VarKey, tuple[str, ...]]] = \
        field(default_factory=dict)
    # A file without main: the functions at whose entry the thread's runs are anchored
    # (those of anchor_roots that reach a read), in file order.
    anchors: tuple[str, ...] = ()
    # Functions that cannot anchor runs, with the first reason: (line, why).
    unanchored: dict[str, tuple[int, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.refusals and bool(self.io_sites)

    def lead(self, call: Call) -> bool:
        """Whether a read's data is read by the thread (a lead read) or only predicted."""
        kind, buf = IO_CALLS[call.name]
        if kind in ALWAYS_LEAD:
            return True
        if kind == "fgetc":
            return call.start in self.value_used
        if buf < 0 or buf >= len(call.args):
            return False
        a = call.args[buf]
        return (a.var is not None and a.var in self.related) or (
            a.via is not None and a.via in self.pointees)


# Library calls whose pointer argument's memory the slice does not read: realloc moves it
# (a later read through the new pointer keeps the stores through it), free ends it.  A
# program growing its read buffer (`b = realloc(b, cap); if (!b) ...; read(fd, b + len,
# ...)`) needs b's value, not what b holds: its reads stay predicted, not lead reads that
# put the whole file in the thread's memory a second time (a helper's probe: 464 MiB
# against 300 MiB, OOM-killed under a cap the program fits).
MOVES_ONLY = frozenset({"realloc", "reallocarray", "free"})


def const_itself(type_: str) -> bool:
    """Whether a variable of this type (as clang spells it) is const itself: `const int`,
    `char *const`, `const char *const[2]` (not `const char *`)."""
    t = type_.split("[")[0].strip()
    if "*" in t:
        return t.replace(" ", "").endswith("const")
    return t.startswith("const ") or t.endswith(" const") or " const " in t


def _null_flag(fields: list[str]) -> bool:
    """Whether the members of one `struct option` initialiser, as written, leave its flag
    pointer null: `.flag = NULL`, or a third member that is a null pointer constant (or
    no third member)."""
    named = [f for f in fields if f.startswith(".")]
    for f in named:
        name, _, value = f[1:].partition("=")
        if name.strip() == "flag":
            return " ".join(value.split()) in NULL_TEXTS
    if named:
        return True
    return len(fields) < 3 or " ".join(fields[2].split()) in NULL_TEXTS


def _flag_name(fields: list[str]) -> str | None:
    """The variable a `struct option` initialiser's flag points to, when it is spelled
    `&name` (as the third member or `.flag`); None for any other pointer."""
    named = [f for f in fields if f.startswith(".")]
    text = None
    for f in named:
        key, _, value = f[1:].partition("=")
        if key.strip() == "flag":
            text = value
    if text is None and not named and len(fields) >= 3:
        text = fields[2]
    m = re.fullmatch(r"\(*\s*&\s*([A-Za-z_]\w*)\s*\)*", (text or "").strip())
    return m.group(1) if m else None


def getopt_state(var: Var) -> bool:
    """Whether `var` is one of libc's variables getopt sets (declared, not defined, here:
    in <unistd.h>, or `extern int optind;` of the file's own)."""
    return var.name in GETOPT_STATE and var.scope == Scope.GLOBAL and var.elsewhere


def io_name(call: Call) -> str | None:
    """The I/O table's name of a call the thread mirrors (reads of standard input are the
    channel's, not the table's)."""
    return call.callee if call.callee in IO_CALLS and channel(call) is None else None


class _Index:
    """One function's statements by the variables they define, declare, read and store
    through (the fixed point asks these for every variable it relates)."""

    def __init__(self, fn: Function):
        self.vars = {v.key: v for v in (*fn.params, *fn.locals, *fn.globals)}
        self.defs: dict[VarKey, list[int]] = {}
        self.declares: dict[VarKey, list[int]] = {}
        self.decl_stmts: dict[VarKey, list[int]] = {}
        self.uses: dict[VarKey, list[int]] = {}
        self.through: dict[VarKey, list[int]] = {}
        self.children: dict[int, list[Stmt]] = {}      # the statements right inside one
        for st in fn.stmts:
            for k in st.defs:
                self.defs.setdefault(k, []).append(st.id)
            for k in st.declares:
                self.declares.setdefault(k, []).append(st.id)
                if st.kind == StmtKind.DECL:
                    self.decl_stmts.setdefault(k, []).append(st.id)
            for k in st.uses:
                self.uses.setdefault(k, []).append(st.id)
            for a in st.stores:
                if a.via is not None:
                    self.through.setdefault(a.via, []).append(st.id)
            if st.parent is not None:
                self.children.setdefault(st.parent, []).append(st)


class _Slicer:
    def __init__(self, program: Program, data: bytes, roots: tuple[str, ...] = ("main",)):
        self.p, self.data = program, data
        self.fns = {f.name: f for f in program.functions}
        # Where the thread's runs start: main, or the anchored functions of a file whose
        # main is elsewhere (foresight_pt_anchor at each one's entry).
        self.roots = tuple(r for r in roots if r in self.fns)
        self.anchored = roots != ("main",)
        self.s = Slice(program)
        self.effect: set[str] = set()      # functions whose calls the thread must make
        self.related_globals: set[VarKey] = set()
        self.related_locals: dict[str, set[VarKey]] = {}
        self.callers: dict[str, list[tuple[str, int]]] = {}
        self.kept_calls: dict[str, list[tuple[str, Call]]] = {}   # callee -> kept call sites
        self.pointees: set[tuple[str | None, VarKey]] = set()      # pointers read through
        self.sends: set[str] = set()       # functions holding a kept channel call
        self.strtok = False                # every strtok call kept (its hidden position)
        self.reach = self.reachable()
        self.index = {f.name: _Index(f) for f in program.functions}
        for f in self.reach:
            for st in self.fns[f].stmts:
                for c in st.calls:
                    if c.callee in self.fns:
                        self.callers.setdefault(c.callee, []).append((f, st.id))

    def text(self, st: Stmt) -> str:
        return self.data[st.start:st.end].decode("utf-8", "replace")

    def refuse(self, line: int, why: str) -> None:
        if (line, why) not in self.s.refusals:
            self.s.refusals.append((line, why))

    def reachable(self) -> list[str]:
        seen, todo = [], list(self.roots)
        while todo:
            f = todo.pop()
            if f in seen or f not in self.fns:
                continue
            seen.append(f)
            todo += [c.callee for st in self.fns[f].stmts for c in st.calls
                     if c.callee in self.fns]
        return sorted(seen, key=lambda n: self.fns[n].start)

    # The fixed point --------------------------------------------------------------------

    def run(self) -> Slice:
        if not self.roots:
            self.refuse(0, "no main in this file (the thread starts at main)")
            return self.s
        for f in self.reach:
            fn = self.fns[f]
            for st in fn.stmts:
                if any(io_name(c) for c in st.calls):
                    self.mark_effect(f)
                    self.keep(f, st.id)
        for f in self.fns.values():
            for st in f.stmts:
                for c in st.calls:
                    if c.callee in UNSLICEABLE:
                        self.refuse(c.line, f"calls `{c.callee}` ({UNSLICEABLE[c.callee]})")
                    elif c.callee == "prctl" and c.args and "SECCOMP" in c.args[0].text:
                        self.refuse(c.line, "sets a seccomp filter of its own")
                    elif c.callee == "syscall" and c.args and re.search(
                            r"\b(SYS|__NR)_(seccomp|unshare|setns|clone3?)\b", c.args[0].text):
                        self.refuse(c.line, f"makes the system call `{c.args[0].text.strip()}`"
                                    " (a filter of its own, or one for a single thread)")
                    elif c.callee in SIGNAL_CALLS and c.args:
                        sig = c.args[0].text.strip()
                        if sig in FAULT_SIGNALS or not re.fullmatch(r"SIG[A-Z0-9]+", sig):
                            self.refuse(c.line, f"installs a handler for `{sig}` (the "
                                        "prefetch thread's own faults are caught so)")
        for name in self.p.address_taken_functions:
            if name in self.fns and self.has_io(name):
                self.refuse(self.fns[name].line, f"`{name}` makes I/O calls and is called "
                            "through a pointer (a signal handler or a callback)")
        self.check_anchor_strings()
        self.s.related = self.related_globals | {
            k for ks in self.related_locals.values() for k in ks}
        self.s.pointees = {k for _, k in self.pointees}
        self.check()
        for f in self.reach:
            for st in self.fns[f].stmts:
                if st.id in self.s.kept.get(f, ()):
                    for c in st.calls:
                        if io_name(c):
                            self.s.io_sites.append((f, c))
                            if IO_CALLS[c.name][0] == "fgetc" and not (
                                    st.kind == StmtKind.EXPR and not st.defs):
                                self.s.value_used.add(c.start)
                        elif channel(c) and c.callee not in self.fns:
                            self.s.chan_sites.append((f, c))
        if not any(IO_CALLS[c.name][0] in TICKED for _, c in self.s.io_sites):
            self.s.io_sites = []    # nothing the thread could read ahead of
        if self.anchored:
            self.s.anchors = tuple(r for r in self.roots if r in self.s.kept)
        return self.s

    def check_anchor_strings(self) -> None:
        """An anchored function's `const char *` parameter the slice reads through is
        copied by `strlen` on the program's thread when a run is anchored: it must be a
        string for certain, so the slice may only pass it, as it is, to functions that
        take strings (a path to open, a number to parse); a load of its own through it,
        or any other use (a buffer and its length), and the function anchors no runs."""
        for f in self.roots:
            if f == "main" or f not in self.s.kept:
                continue
            fn = self.fns[f]
            for v in fn.params:
                if (f, v.key) not in self.pointees:
                    continue
                for sid in sorted(self.s.kept[f]):
                    st = fn.stmts[sid]
                    bad = any(a.via == v.key for a in st.loads) or any(
                        c.callee not in STRING_TAKERS and any(
                            v.key in a.uses for a in c.args) for c in st.calls)
                    if bad:
                        why = (f"`{v.name}`, a `const char *` parameter of `{f}` where its "
                               "runs start, is used as more than a string (only a string "
                               "passed to open, stat or a parser is copied)")
                        self.refuse(st.line, why)
                        self.s.unanchored.setdefault(f, (st.line, why))
                        break

    def has_io(self, name: str, seen: set[str] | None = None) -> bool:
        seen = seen if seen is not None else set()
        if name in seen or name not in self.fns:
            return False
        seen.add(name)
        for st in self.fns[name].stmts:
            for c in st.calls:
                if io_name(c) or (c.callee in self.fns and self.has_io(c.callee, seen)) or (
                        name in self.sends and channel(c)):
                    return True
        return False

    def mark_effect(self, f: str) -> None:
        """Calls of `f` must run on the thread too: keep every call site."""
        if f in self.effect:
            return
        self.effect.add(f)
        for caller, sid in self.callers.get(f, ()):
            self.keep(caller, sid)
            self.mark_effect(caller)

    def relevant(self, f: str) -> None:
        """`f` gets a clone: its jumps are kept (where it returns decides what runs)."""
        if f in self.s.kept:
            return
        self.s.kept[f] = set()
        self.related_locals[f] = set()
        self.keep(f, 0)     # its body: what is not kept inside is removed
        fn = self.fns[f]
        params = {v.key for v in fn.params if v.is_pointer} if f not in self.roots else set()
        for st in fn.stmts:
            if (st.kind in (StmtKind.RETURN, StmtKind.GOTO)
                    or any(c.callee in EXITS for c in st.calls)
                    or (st.stores and any(c.callee == "__errno_location" for c in st.calls))
                    or (st.kind == StmtKind.DECL and (not st.declares         # a type
                                                      or _TAG.search(self.text(st))))
                    or any(a.via in params for a in st.stores)):        # a result
                self.keep(f, st.id)

    def keep(self, f: str, sid: int) -> None:
        self.relevant(f)
        kept = self.s.kept[f]
        if sid in kept:
            return
        kept.add(sid)
        fn = self.fns[f]
        st = fn.stmts[sid]
        if not st.spelled or st.from_macro:
            self.refuse(st.line, "a statement the thread needs is made by a macro or an "
                        "#include, whose text cannot be rewritten")
        elif st.kind == StmtKind.DECL and b"cleanup" in self.data[st.start:st.end]:
            self.refuse(st.line, "a variable the thread needs has a cleanup function, "
                        "which would free the thread's memory with the program's")
        # The parents (structure and control).
        if st.parent is not None:
            self.keep(f, st.parent)
        if st.kind == StmtKind.RETURN and f != "main" and f not in self.s.needed and any(
                c.callee in self.fns or io_name(c) or channel(c) for c in st.calls):
            self.value_needed(f)    # (a call the thread must make: all of it, simply)
        # main's clone returns 0; another function's value is computed only where a
        # caller's kept statement reads it (value_needed).
        if st.kind != StmtKind.RETURN or (f != "main" and f in self.s.needed):
            self.computed(f, st)
        # An argument of one of the program's functions matters as far as its parameter
        # does in the callee (Section 4.2): related there, related here.
        for c in st.calls:
            callee = self.fns.get(c.callee or "")
            if callee is None:
                continue
            self.kept_calls.setdefault(callee.name, []).append((f, c))
            for i, p in enumerate(callee.params):
                if i >= len(c.args):
                    continue
                if p.key in self.related_locals.get(callee.name, ()):
                    for k in c.args[i].uses:
                        self.relate(f, k)
                if (callee.name, p.key) in self.pointees:
                    self.argument_pointee(f, c.args[i])
        skip = self.buffers(f, st) - set(st.sized)   # `sizeof buf` still names buf
        reduced = self.s.reduced.get((f, sid))
        named = (*st.defs, *st.uses) if reduced is None else [
            k for a in reduced.args for k in a.uses]
        for k in named:
            if k not in skip:
                self.declare(f, k)
        if st.kind == StmtKind.SWITCH:
            for s2 in fn.within(sid):
                if s2.kind == StmtKind.CASE and self.switch_of(fn, s2) == sid:
                    self.keep(f, s2.id)
        if st.kind.is_loop or st.kind == StmtKind.SWITCH:
            for s2 in fn.within(sid):
                if s2.kind in (StmtKind.BREAK, StmtKind.CONTINUE) and s2.target == sid:
                    self.keep(f, s2.id)
        if st.kind == StmtKind.GOTO and st.target is not None:
            self.keep(f, st.target)
        if st.kind == StmtKind.LABEL:
            for s2 in fn.stmts:
                if s2.kind == StmtKind.GOTO and s2.target == sid:
                    self.keep(f, s2.id)

    def runnable(self, c: Call) -> bool:
        """Whether the thread may make call C (call() judges the details)."""
        name = c.callee or ""
        return not c.indirect and (
            name in self.fns or name in IO_CALLS or name in EXITS or name in ALLOC
            or name in PURE or name in WRITES_INTO or name in RENAMED or name in WRITES
            or name in SORTS or name in TLS_ACCESSORS or channel(c) is not None)

    def reducible(self, st: Stmt) -> Call | None:
        """An expression statement kept for the one call it holds that the thread must
        make (an I/O call, a sync point, a call of the program's) inside calls it cannot
        run (`printf("%zd\n", pread(...))`): that call, which the thread makes alone."""
        if st.kind != StmtKind.EXPR:
            return None
        must = [c for c in st.calls if io_name(c) or channel(c) or c.callee in self.fns]
        top = [c for c in must if not any(o is not c and o.start <= c.start
                                          and c.end <= o.end for o in must)]
        if len(top) != 1 or top[0].start < 0:
            return None
        e = top[0]
        outside = [c for c in st.calls if not (e.start <= c.start and c.end <= e.end)]
        # (fprintf and printf run as a prediction that drops their arguments: the call
        # inside them is made alone)
        if not outside or all(self.runnable(c) and c.callee not in FORMATTED
                              for c in outside):
            return None
        if re.search(rb"\?|&&|\|\|", self.data[st.start:e.start] + self.data[e.end:st.end]):
            return None     # the call may not run (`x && printf("%d", f(fd))`)
        return e

    def computed(self, f: str, st: Stmt) -> None:
        """A kept statement's expressions run on the thread: what they call and read."""
        e = self.s.reduced.get((f, st.id)) or self.reducible(st)
        if e is not None:
            self.s.reduced[(f, st.id)] = e
            inside = [c for c in st.calls if e.start <= c.start and c.end <= e.end]
            for c in inside:
                self.call(f, st, c)
            skip = self.buffers(f, st) | self.received(f, st) | set(st.unevaluated)
            if e.callee not in self.fns:      # (a function's parameters decide for it)
                for k in dict.fromkeys(k for a in e.args for k in a.uses):
                    if k not in skip:
                        self.relate(f, k)
            for a in st.loads:
                if a.via is not None:
                    self.pointee(f, a.via)
            self.library_reads(f, inside)
            for c in inside:
                if c is not e and c.callee in self.fns:
                    self.value_needed(c.callee)
            return
        for c in st.calls:
            self.call(f, st, c)
        passed = self.passed_only(st)
        for k in self.reads(f, st):
            if k not in passed:
                self.relate(f, k)
        # What is read through a pointer: the stores through it.
        for a in st.loads:
            if a.via is not None:
                self.pointee(f, a.via)
        self.library_reads(f, st.calls)
        self.calls_valued(f, st, always=st.kind == StmtKind.RETURN)

    def library_reads(self, f: str, calls) -> None:
        """A library call the thread makes reads what its pointer arguments point to (a
        path for open, a string for atol, the source of memcpy or snprintf's arguments),
        but for the buffer it fills: the stores through those pointers are the slice's
        (`snprintf(path, n, "%s/x", dir)` into a malloc'd `path` before `open(path)`)."""
        for c in calls:
            if c.indirect or c.callee in self.fns or c.callee in MOVES_ONLY:
                continue
            io = io_name(c)
            filled = {IO_CALLS[io][1]} if io else write_data(c)   # (never passed)
            if c.callee in WRITES_INTO:
                filled.add(WRITES_INTO[c.callee])
            if c.callee in STORES_FROM:
                filled |= set(range(STORES_FROM[c.callee], len(c.args)))
            filled |= set(channel_outputs(c))
            for i, a in enumerate(c.args):
                if i not in filled and a.pointer and a.via is not None:
                    self.pointee(f, a.via)

    def returns_zero(self, f: str, st: Stmt) -> bool:
        """A kept return whose value no slice reads: its clone returns a zero of the
        expression's type, computing nothing."""
        return st.kind == StmtKind.RETURN and f != "main" and f not in self.s.needed

    def value_needed(self, f: str) -> None:
        """The value `f` returns is read by the slice: its kept returns compute it."""
        if f in self.s.needed or f not in self.fns or f == "main":
            return
        self.s.needed.add(f)
        fn = self.fns[f]
        for sid in sorted(self.s.kept.get(f, ())):
            if fn.stmts[sid].kind == StmtKind.RETURN:
                self.computed(f, fn.stmts[sid])

    def calls_valued(self, f: str, st: Stmt, always: bool = False) -> None:
        """The program's functions a kept statement calls whose value it may read: in a
        condition, inside another call's arguments, defining a variable the slice reads
        (or ALWAYS: a return whose value is read)."""
        mine = [c for c in st.calls if c.callee in self.fns]
        if not mine:
            return
        # (`a() ? b(fd) : c(fd)`, `x && f(fd)`: a value that decides what runs)
        if always or st.kind.is_control or re.search(rb"\?|&&|\|\|",
                                                     self.data[st.start:st.end]):
            for c in mine:
                self.value_needed(c.callee)
            return
        related = self.related_locals.get(f, set())
        defines = any(k in related or k in self.related_globals for k in st.defs)
        for c in mine:
            nested = any(o is not c and o.start <= c.start and c.end <= o.end
                         for o in st.calls)
            if defines or nested or st.stores:
                self.value_needed(c.callee)

    @staticmethod
    def switch_of(fn: Function, st: Stmt) -> int | None:
        at = st.parent
        while at is not None and fn.stmts[at].kind != StmtKind.SWITCH:
            at = fn.stmts[at].parent
        return at

    def reads(self, f: str, st: Stmt) -> list[VarKey]:
        """What a kept statement reads that the thread must compute: everything, but the
        buffer of an I/O call (its contents matter only if something else reads them) and
        what an exit reports."""
        skip = self.buffers(f, st) | self.received(f, st) | set(st.unevaluated)
        out = [k for k in (*st.uses, *st.cond_uses) if k not in skip]
        return list(dict.fromkeys(out))

    def pointee(self, f: str, key: VarKey) -> None:
        """What pointer `key` points to is read by the thread: keep the stores through it
        (`idx[k] = ...` read later as `pread(..., idx[k] * B)`), and for a parameter,
        what the callers pass."""
        fn = self.fns[f]
        var = self.index[f].vars.get(key)
        if var is None:
            return
        if var.scope == Scope.GLOBAL:
            if (None, key) in self.pointees:
                return
            self.pointees.add((None, key))
            where = [(g, self.fns[g]) for g in self.reach]
        else:
            if (f, key) in self.pointees:
                return
            self.pointees.add((f, key))
            where = [(f, fn)]
            if f == "main" and var.scope == Scope.PARAM:
                return      # argv: the program's strings, only read
            if f in self.roots and var.scope == Scope.PARAM:
                # An anchored function's parameter holds the program's address: only a
                # string (`const char *`, copied when the run is anchored) is read.
                if not _const_string(var.type):
                    why = (f"the thread would read through `{var.name}`, a parameter of "
                           f"`{f}` where its runs start (the program's memory; only `const "
                           "char *` strings are copied)")
                    self.refuse(var.line, why)
                    self.s.unanchored.setdefault(f, (var.line, why))
                return
        self.relate(f, key)     # reading through it needs its value
        for g, gfn in where:
            gix = self.index[g]
            for sid in gix.through.get(key, ()):
                self.keep(g, sid)
            for sid in gix.uses.get(key, ()):
                st = gfn.stmts[sid]
                # A pointer made from it (`char *p = buf; read(fd, p, n)`) reaches the
                # same memory.
                for d in st.defs:
                    dv = gix.vars.get(d)
                    if d != key and dv is not None and dv.is_pointer:
                        self.pointee(g, d)
                self.callee_pointees(g, st, lambda a: a.via == key)
        if var.scope == Scope.PARAM:
            index = next(i for i, p in enumerate(fn.params) if p.key == key)
            for caller, c in self.kept_calls.get(f, ()):
                if index < len(c.args):
                    self.argument_pointee(caller, c.args[index])

    def callee_pointees(self, f: str, st: Stmt, passes) -> None:
        """Memory the slice reads is passed to one of the program's functions, which may
        store into it (`read_full(fd, slot, n)`): what its parameter points to is read."""
        for c in st.calls:
            callee = self.fns.get(c.callee or "")
            if callee is None:
                continue
            for i, a in enumerate(c.args):
                if i < len(callee.params) and a.writable and passes(a):
                    self.relevant(callee.name)
                    self.keep(f, st.id)
                    self.pointee(callee.name, callee.params[i].key)

    def argument_pointee(self, f: str, arg) -> None:
        if arg.var is not None:
            self.relate(f, arg.var)         # an array or a variable's address
        elif arg.via is not None:
            self.pointee(f, arg.via)

    def passed_only(self, st: Stmt) -> set[VarKey]:
        """The variables a statement reads only as arguments of the program's functions
        (their parameters decide whether they matter)."""
        mine, other = set(), set()
        for c in st.calls:
            for a in c.args:
                (mine if c.callee in self.fns else other).update(a.uses)
            other.update(c.callee_uses)
        outside = set(st.uses) - mine - other
        return mine - other - outside

    def named_elsewhere(self, f: str, st: Stmt, key: VarKey,
                        inside: list[tuple[int, int]]) -> bool:
        """Whether statement ST's own text (not that of the statements inside it) names
        variable KEY outside the byte ranges INSIDE (the IR's uses are per statement, not
        per place)."""
        holes = [(c.start, c.end) for c in self.index[f].children.get(st.id, ())] + inside
        text = bytearray(self.data[st.start:st.end])
        for a, b in holes:
            lo, hi = max(a, st.start) - st.start, min(b, st.end) - st.start
            if lo < hi:
                text[lo:hi] = b" " * (hi - lo)
        text = _SIZEOF.sub(lambda m: b" " * len(m.group(0)), bytes(text))  # not evaluated
        return re.search(rb"(?<![A-Za-z0-9_])" + re.escape(key[2].encode())
                         + rb"(?![A-Za-z0-9_])", text) is not None

    def only_in(self, f: str, st: Stmt, args: list[Arg]) -> set[VarKey]:
        """The variables ST names only inside ARGS."""
        if any(a.start < 0 for a in args):
            return set()        # made by a macro: where else it names them is unknown
        ranges = [(a.start, a.end) for a in args]
        return {k for a in args for k in a.uses
                if not self.named_elsewhere(f, st, k, ranges)}

    def received(self, f: str, st: Stmt) -> set[VarKey]:
        """The variables a statement names only as where a channel call stores (the thread
        receives their bytes: they need a declaration, not a computation)."""
        out: set[VarKey] = set()
        for c in st.calls:
            outs = [c.args[i] for i in channel_outputs(c)]
            # Only an object itself (`&n`, an array): a pointer's value is where the thread
            # stores, so it must compute it.
            own = {a.var for a in outs if a.var is not None}
            out |= self.only_in(f, st, outs) & own
        return out

    def buffers(self, f: str, st: Stmt) -> set[VarKey]:
        """The variables a statement names only as an I/O call's buffer or an exit's
        argument.  A lead read's buffer is not among them: the thread reads into it
        (`char line[MAXLINE]; ... fgets(line, MAXLINE, f)` needs line declared)."""
        skip: set[VarKey] = set()
        for c in st.calls:
            name = io_name(c)
            if name and self.s.lead(c):
                continue
            data = {IO_CALLS[name][1]} if name else write_data(c)
            data = [c.args[i] for i in data if 0 <= i < len(c.args)]
            if data:
                skip |= self.only_in(f, st, data)
            elif c.callee in EXITS:
                skip |= self.only_in(f, st, list(c.args))
        return skip

    def declare(self, f: str, key: VarKey) -> None:
        """A variable a kept statement names must be declared in the clone."""
        for sid in self.index[f].decl_stmts.get(key, ()):
            self.keep(f, sid)

    def relate(self, f: str, key: VarKey) -> None:
        fn = self.fns[f]
        ix = self.index[f]
        var = ix.vars.get(key)
        if var is None:
            return
        if var.scope == Scope.GLOBAL:
            if key in self.related_globals:
                return
            self.related_globals.add(key)
            for g in self.reach:
                for sid in self.index[g].defs.get(key, ()):
                    self.keep(g, sid)
                    self.mark_effect(g)
                    self.calls_valued(g, self.fns[g].stmts[sid])
            if getopt_state(var):
                # libc's optarg, optind...: every getopt call defines them.
                for g in self.reach:
                    for st in self.fns[g].stmts:
                        if any(channel(c) in ("getopt", "getopt_long")
                               for c in st.calls):
                            self.keep(g, st.id)
            return
        mine = self.related_locals.setdefault(f, set())
        if key in mine:
            return
        mine.add(key)
        if var.scope == Scope.PARAM:
            index = next(i for i, p in enumerate(fn.params) if p.key == key)
            for caller, c in self.kept_calls.get(f, ()):
                if index < len(c.args):
                    for k in c.args[index].uses:
                        self.relate(caller, k)
        for sid in sorted({*ix.defs.get(key, ()), *ix.declares.get(key, ())}):
            self.keep(f, sid)
            self.calls_valued(f, fn.stmts[sid])
        if not var.is_pointer:
            for sid in ix.defs.get(key, ()):
                self.callee_pointees(f, fn.stmts[sid], lambda a: a.var == key)

    def call(self, f: str, st: Stmt, c: Call) -> None:
        if c.indirect:
            self.refuse(c.line, f"a call through a pointer (`{c.target}`) the thread would "
                        "need")
            return
        name = c.callee or ""
        if name in self.fns:
            self.relevant(name)   # its value (and its stores through pointers) are needed
            return
        if name in FORMATTED:
            # Made as a prediction that passes none of its data (write_data): nothing it
            # would store (%n, a format not a literal) or call there can be the thread's.
            data = [c.args[i] for i in sorted(write_data(c))]
            if any(a.pointer and a.writable for a in data):
                self.refuse(c.line, f"`{name}` may store through its arguments (%n, or a "
                            "format that is not a literal)")
            lo, hi = (data[0].start, data[-1].end) if data else (0, 0)
            if lo < hi and _ASSIGNS.search(_LITERALS.sub(b'""', self.data[lo:hi])):
                self.refuse(c.line, f"the data of `{name}` changes a variable (the thread "
                            "does not pass it)")
            for c2 in st.calls:
                if c2 is not c and lo <= c2.start < hi and (
                        io_name(c2) or channel(c2) or c2.callee in self.fns):
                    self.refuse(c.line, f"`{c2.name}` is in the data of `{name}`, which "
                                "the thread does not pass")
            return
        if channel(c):
            # A sync point: the program sends what it got, so both threads must make
            # this function's calls in the same order (as for I/O calls).
            self.sends.add(f)
            self.mark_effect(f)
            if channel(c) == "getopt_long":
                why = self.long_options_flagged(f, c)
                if why:
                    self.refuse(c.line, f"`{name}` {why}")
            return
        if name == "strtok" and not self.strtok:
            # Its position is a variable every strtok call sets: the thread makes all of
            # them, in the program's order (`strtok(line, ":")` whose token nobody reads
            # still starts the `strtok(NULL, " ")` after it).
            self.strtok = True
            for g in self.reach:
                for s2 in self.fns[g].stmts:
                    if any(c2.callee == "strtok" for c2 in s2.calls):
                        self.keep(g, s2.id)
                        self.mark_effect(g)
        if name in IO_CALLS or name in EXITS or name in ALLOC or name in PURE \
                or name in WRITES_INTO or name in RENAMED or name in WRITES \
                or name in TLS_ACCESSORS:
            return
        if name in SORTS and len(c.args) > SORTS[name]:
            cmp = c.args[SORTS[name]].text.strip().lstrip("&").strip()
            why = self.impure(cmp)
            if why:
                self.refuse(c.line, f"`{name}` compares with `{cmp}`, which {why}")
            return
        self.refuse(c.line, f"calls `{name}`, which the prefetch thread cannot run")

    def long_options_flagged(self, f: str, c: Call) -> str | None:
        """Why the thread cannot take getopt_long's results from the channel: an option of
        its table may store through a flag pointer (`{"verbose", 0, &verbose, 1}`: that
        store the program's call makes where the thread cannot see it), or the table or
        the index pointer is not one the file's text shows.  None where it can."""
        if len(c.args) < 5:
            return "has fewer than five arguments"
        index = c.args[4].text.strip()
        if index not in NULL_TEXTS:
            iv = self.index[f].vars.get(c.args[4].var) if c.args[4].var else None
            if not re.fullmatch(r"&\s*[A-Za-z_]\w*", index) or iv is None or \
                    iv.scope not in (Scope.LOCAL, Scope.STATIC):
                return ("stores its option's index through a pointer other than the "
                        "address of a local variable")
        var = self.index[f].vars.get(c.args[3].var) if c.args[3].var else None
        if var is None or not var.is_array:
            return "takes its options from something other than an array of the file"
        if Path(var.key[0]).resolve() != Path(self.p.file).resolve():
            return f"takes its options from `{var.name}`, declared outside the file"
        flagged = (f"may set flags through the pointers in `{var.name}` (line {var.line}), "
                   "which the prefetch thread cannot follow")
        # A flag is `&name`: in a table of the function's own (a clone's, as are the
        # variables its initialiser names) the thread's call stores through it as it is;
        # in a file-scope table (the program's addresses) the thread stores into its copy
        # of that file-scope variable instead (rewrite/prefetch_thread.py).
        file_scope = var.scope == Scope.GLOBAL
        scope_vars = {v.name: v for v in self.index[f].vars.values()
                      if v.scope == Scope.GLOBAL}
        flags: list[str] = []
        for g in self.reach:      # a table changed as the program runs (getopt_long reads it)
            if any((var.key in st.defs or any(a.via == var.key for a in st.stores))
                   and not any(channel(c2) == "getopt_long" for c2 in st.calls)
                   and not (st.kind == StmtKind.DECL and var.key in st.declares)
                   for st in self.fns[g].stmts):
                return (f"takes its options from `{var.name}` (line {var.line}), which the "
                        "program changes as it runs")
        # Each option's third member (or `.flag`) must be a null pointer as written.
        end, depth, at = len(self.data), 0, var.key[1]
        field, fields = bytearray(), []
        while at < end:
            ch = self.data[at:at + 1]
            if ch in (b'"', b"'"):   # a string or character literal
                close = at + 1
                while close < end and self.data[close:close + 1] != ch:
                    close += 2 if self.data[close:close + 1] == b"\\" else 1
                field += self.data[at:close + 1]
                at = close + 1
                continue
            if ch in b"({[":
                depth += 1
            elif ch in b")}]":
                if depth == 2 and ch == b"}":
                    fields.append(field.decode(errors="replace").strip())
                    if not _null_flag(fields):
                        name = _flag_name(fields)
                        if name is None or (file_scope and name not in scope_vars):
                            return flagged
                        flags.append(name)
                    field, fields = bytearray(), []
                depth -= 1
            elif ch == b"," and depth == 2:
                fields.append(field.decode(errors="replace").strip())
                field = bytearray()
                at += 1
                continue
            elif ch == b";" and depth <= 0:
                if flags:
                    self.s.long_flags[(f, c.start)] = (var.key,
                                                       tuple(flags) if file_scope else ())
                return None
            if depth >= 2 and not (depth == 2 and ch == b"{"):
                field += ch
            at += 1
        return f"takes its options from `{var.name}`, whose declaration is not spelled out"

    def impure(self, name: str) -> str | None:
        """Why the thread may not call the program's function `name` as it is (a
        comparison function of qsort), None when it only reads and returns."""
        fn = self.fns.get(name)
        if fn is None:
            return "is not a function defined in this file"
        for st in fn.stmts:
            if st.stores:
                return f"stores through a pointer (line {st.line})"
            for c in st.calls:
                if c.callee not in PURE:
                    return f"calls `{c.name}` (line {st.line})"
            for k in st.defs:
                try:
                    if fn.var(k).scope in (Scope.GLOBAL, Scope.STATIC):
                        return f"changes `{k[2]}` (line {st.line})"
                except KeyError:
                    return f"changes `{k[2]}` (line {st.line})"
        # It runs as it is, so a variable of the file it reads is the program's own, read
        # while the program may write it (a constant one cannot change).
        for v in fn.globals:
            if not const_itself(v.type):
                return f"reads the program's `{v.name}`"
        return None

    # What the thread may touch ---------------------------------------------------------

    def check(self) -> None:
        private = self.private_pointers()
        for f, kept in self.s.kept.items():
            fn = self.fns[f]
            # One text, several calls: a macro evaluates its argument more than once
            # (`#define TWICE(x) ((x) < 0 ? 0 : (x))`), so a tick put into that text would
            # count each of them.
            spots: dict[int, Call] = {}
            for sid in kept:
                for c in fn.stmts[sid].calls:
                    if (io_name(c) or channel(c) or c.callee in WRITES) and c.start >= 0:
                        if c.start in spots and spots[c.start] is not c:
                            self.refuse(c.line, f"a macro makes `{c.name}` more than once "
                                        "from one text")
                        spots[c.start] = c
            for sid in sorted(kept):
                st = fn.stmts[sid]
                if self.returns_zero(f, st) or (st.kind == StmtKind.RETURN and f == "main"):
                    continue    # its expression is not run (the clone returns a zero)
                reduced = self.s.reduced.get((f, sid))
                if reduced is not None:
                    # Only its one call runs: what that call's arguments name.
                    own = {a.var for c in st.calls if reduced.start <= c.start
                           and c.end <= reduced.end for a in c.args if a.var is not None}
                    for k in st.defs:
                        if k in self.s.related and k not in own:
                            self.refuse(st.line, f"the value of the statement around "
                                        f"`{reduced.name}` is needed, and it calls what "
                                        "the thread cannot run")
                    for c in st.calls:
                        if reduced.start <= c.start and c.end <= reduced.end:
                            self.check_args(f, fn, st, c, private)
                    continue
                # Arguments of the calls check_args judges: I/O calls (the runtime never
                # writes through a FILE * it did not make, a predicted read's buffer is
                # not passed), the program's functions, the writers into the first.
                judged = {(a.via, a.text) for c in st.calls
                          if io_name(c) or c.callee in self.fns or c.callee in WRITES_INTO
                          or c.callee in RENAMED or c.callee in SORTS or channel(c)
                          or c.callee in WRITES for a in c.args}
                # errno and <ctype.h>'s tables: a macro's access through libc's accessor,
                # the calling thread's own (errno) or read-only (the tables).
                tls = any(c.callee in TLS_ACCESSORS for c in st.calls)
                for a in st.stores:
                    if (a.via, a.text) in judged or a.text.strip() in NULL_TEXTS or (
                            tls and a.via is None and a.text.strip() in ("", "errno")):
                        continue
                    if a.via is None or (f, a.via) not in private:
                        self.refuse(a.line, f"a store the thread needs (`{a.text}`) may "
                                    "reach the program's memory")
                for a in st.loads:
                    if tls and a.via is None and a.text.strip() in ("", "errno"):
                        continue
                    if a.via is None or not ((f, a.via) in private
                                             or self.string_pointer(fn, a.via)):
                        self.refuse(a.line, f"a load the thread needs (`{a.text}`) reads "
                                    "the program's memory through a pointer")
                for c in st.calls:
                    self.check_args(f, fn, st, c, private)
                for k in (*st.uses, *st.defs):
                    try:
                        var = fn.var(k)
                    except KeyError:
                        continue
                    if var.scope == Scope.GLOBAL:
                        self.s.globals.add(k)
                        if "[]" in var.type:
                            self.refuse(var.line, f"`{var.name}` is an array of unknown "
                                        "size, which the thread cannot copy")

    def check_args(self, f: str, fn: Function, st: Stmt, c: Call,
                   private: set[tuple[str, VarKey]]) -> None:
        name = c.callee or ""
        io = io_name(c)
        writes = set()
        if io and IO_CALLS[io][1] >= 0 and self.s.lead(c):
            writes.add(IO_CALLS[io][1])
        if io and IO_CALLS[io][0] == "fscanf":
            writes |= set(range(2, len(c.args)))
        if io and IO_CALLS[io][0] == "getline":
            writes |= {0, 1}       # the line and its size: the thread's own
        if name in WRITES_INTO:
            writes.add(WRITES_INTO[name])
        if name in STORES_FROM:
            writes |= set(range(STORES_FROM[name], len(c.args)))
        if name in SORTS:
            writes.add(0)
        if channel(c):
            writes |= {i for i in channel_outputs(c) if c.args[i].text.strip() not in NULL_TEXTS}
        if name in self.fns:
            # (a stream: the callee's clone reads through it with the runtime's stdio,
            # which never writes through a FILE it did not make; a store of its own
            # through the parameter is checked there, the parameter being the program's)
            writes |= {i for i, a in enumerate(c.args) if a.pointer and a.writable
                       and not self.stream(f, a)}
        if io and IO_CALLS[io][0] in ("readv", "preadv") and len(c.args) > 1:
            # The thread reads the iovecs' lengths itself: from its own array, or
            # through a pointer that can only point to its own memory.
            a = c.args[1]
            if a.var is None and (a.via is None or (f, a.via) not in private):
                self.refuse(c.line, f"`{name}` may read the program's memory through "
                            f"`{a.text}`")
        for i, a in enumerate(c.args):
            if io and i == IO_CALLS[io][1] and i not in writes:
                continue   # a predicted read: its buffer is not passed
            if a.start < 0 and (io or name in self.fns or name in WRITES_INTO or channel(c)):
                self.refuse(c.line, f"an argument of `{name}` is made by a macro")
            if i in writes:
                if a.var is not None or a.text.strip() in NULL_TEXTS:
                    continue     # the thread's own variable (a clone's local or a copy)
                via = self.index[f].vars.get(a.via) if a.via is not None else None
                if via is not None and getopt_state(via):
                    continue     # the thread's optarg: in its copy of argv, or its arena
                if a.via is None or (f, a.via) not in private:
                    self.refuse(c.line, f"`{name}` may write the program's memory "
                                f"through `{a.text}`")

    def stream(self, f: str, a: Arg) -> bool:
        """Whether argument `a` is a `FILE *` variable."""
        var = self.index[f].vars.get(a.via) if a.via is not None else None
        return var is not None and var.is_pointer and re.fullmatch(
            r"(const\s+)?(FILE|struct _IO_FILE)\s*\*(\s*const)?", var.type.strip()) is not None

    def string_pointer(self, fn: Function, key: VarKey) -> bool:
        try:
            var = fn.var(key)
        except KeyError:
            return False
        if fn.name == "main" and var.scope == Scope.PARAM:
            return True
        return var.is_pointer and var.type.replace(" ", "").rstrip("const").endswith(
            "char*")

    def private_pointers(self) -> set[tuple[str, VarKey]]:
        """Pointer variables of the clones that can only point to the thread's own memory:
        the greatest set such that each is a clone's local (not static) or a parameter of
        a function other than main, and every kept statement defining it reads only its
        own variables, private pointers and arrays of its own, and calls only the arena's
        allocations and pure functions (the arguments of user functions are checked
        where they are called)."""
        cand: set[tuple[str, VarKey]] = set()
        for f, _kept in self.s.kept.items():
            fn = self.fns[f]
            for v in (*fn.params, *fn.locals):
                # (main's argv and envp: the thread's copies, strings and all; an anchored
                # function's parameters hold the program's addresses, but its strings,
                # which the anchor copies)
                if v.is_pointer and v.scope in (Scope.LOCAL, Scope.PARAM) and not (
                        f in self.roots and f != "main" and v.scope == Scope.PARAM
                        and not _const_string(v.type)):
                    cand.add((f, v.key))
        changed = True
        while changed:
            changed = False
            for f, key in sorted(cand):
                fn = self.fns[f]
                for sid in self.s.kept[f]:
                    st = fn.stmts[sid]
                    if key not in st.defs or self.defines_privately(f, fn, st, key, cand):
                        continue
                    cand.discard((f, key))
                    changed = True
                    break
            # A parameter holds what the kept calls pass it: one of them passing the
            # program's memory (`at(plan, k)`, plan a copied global pointer) makes it the
            # program's, read-only parameters too.
            for f, kept in self.s.kept.items():
                fn = self.fns[f]
                for sid in kept:
                    for c in fn.stmts[sid].calls:
                        g = self.fns.get(c.callee or "")
                        if g is None or c.callee not in self.s.kept:
                            continue
                        for a, p in zip(c.args, g.params, strict=False):
                            if (c.callee, p.key) in cand and a.pointer and not (
                                    self.own_object(fn, a.var) or (
                                        a.via is not None and a.direct
                                        and (f, a.via) in cand)):
                                cand.discard((c.callee, p.key))
                                changed = True
        return cand

    @staticmethod
    def own_object(fn: Function, key: VarKey | None) -> bool:
        """Whether the thread's object `key` (a clone's variable, or its copy of a global)
        holds only the thread's addresses: not a copied global that may hold an address
        (`&gio`, gio = {buf_a}: the copy still points at the program's buf_a)."""
        if key is None:
            return False
        try:
            var = fn.var(key)
        except KeyError:
            return False
        return not (var.scope == Scope.GLOBAL and var.holds_address)

    def defines_privately(self, f: str, fn: Function, st: Stmt, key: VarKey,
                          cand: set[tuple[str, VarKey]]) -> bool:
        if any(a.via is None or (f, a.via) not in cand for a in st.loads):
            return False
        for c in st.calls:
            # (strtok's token lies in the string it cuts: checked the thread's own where
            # it is passed, the last one cut for NULL)
            if c.callee not in ALLOC and c.callee not in PURE and c.callee not in IO_CALLS \
                    and c.callee not in ("strtok", "strtok_r"):
                return False
        # A fresh allocation's or handle's value does not depend on its arguments.
        fresh = {k for c in st.calls if c.callee in ALLOC or c.callee in IO_CALLS
                 for a in c.args for k in a.uses}
        for k in st.uses:
            if k == key or k in fresh:
                continue
            try:
                var = fn.var(k)
            except KeyError:
                return False
            if var.is_pointer and (f, k) not in cand:
                return False
            if var.scope == Scope.GLOBAL and var.holds_address:
                return False
        return True


def macro_statements(fn: Function, data: bytes, names: set[str]
                     ) -> tuple[Function, dict[int, Call]]:
    """`fn` with the statements macro calls make (`CHECK(pread(fd, b, n, off));`) as the
    thread runs them, and the calls it then makes alone, by statement id.

    The statement a macro call makes, with those inside it, becomes one expression
    statement holding the one call the thread must make (an I/O call, a sync point, a
    call of the program's), where the file spells that call whole in the macro call's
    argument (frontend/text.py: macro_argument_call): the thread makes that call alone, as
    if the macro's checks passed (where they fail the program takes its error path, which
    the thread then mispredicts).  One that can only end the process (it calls only exits
    and printers, jumps nowhere and sets nothing: `DIE("open");`) becomes an empty
    statement, which the thread does not need (the process ends with it).  Any other
    stays as it is, which the thread refuses where it needs it.  The statements inside a
    rewritten one become empty statements outside the function's tree."""
    stmts = list(fn.stmts)
    calls_e: dict[int, Call] = {}
    for st in fn.stmts:
        if not st.from_macro or st.start < 0 or st.parent is None or \
                fn.stmts[st.parent].from_macro or st.kind == StmtKind.DECL:
            continue
        inside = fn.within(st.id)
        if any(o.parent == st.parent and o.id != st.id and o.start < st.end
               and st.start < o.end for o in fn.stmts):
            continue    # not alone in its text (`#define TWO(a) f(a); g(a)`)
        calls = [c for o in inside for c in o.calls]
        must = [c for c in calls if io_name(c) or channel(c) or c.callee in names]
        if not must:
            jumps = any(o.kind in (StmtKind.RETURN, StmtKind.BREAK, StmtKind.CONTINUE,
                                   StmtKind.GOTO, StmtKind.LABEL, StmtKind.CASE, StmtKind.DECL)
                        for o in inside)
            # (stores only through what it prints to: `fprintf(stderr, ...)`)
            printed = {a.text for c in calls for a in c.args}
            if jumps or not calls or any(o.defs for o in inside) or any(
                    a.text not in printed for o in inside for a in o.stores) or not all(
                    c.callee in EXITS or c.callee in _REPORTS for c in calls):
                continue
            new = Stmt(st.id, StmtKind.NULL, st.line, st.start, st.end, st.parent,
                       st.control)
        else:
            top = [c for c in must if not any(o is not c and o.start <= c.start
                                              and c.end <= o.end for o in must)]
            # (the macro's own calls are all at its start)
            starts = [c.start for c in calls if c.start > st.start]
            if len(top) != 1 or len(starts) != len(set(starts)):
                continue    # several, or the macro evaluates its argument twice
                            # (a declaration inside: _only_checks)
            e = top[0]
            name = e.callee or ""
            if not (st.start <= e.start < e.end <= st.end) or \
                    data[e.start:e.start + len(name)] != name.encode():
                continue
            mine = [c for c in calls if e.start <= c.start and c.end <= e.end]
            holders = [o for o in inside if any(c in mine for c in o.calls)]
            if not _only_checks(fn, inside, holders, mine):
                continue

            def union(field: str, holders: list[Stmt] = holders) -> tuple:
                return tuple(dict.fromkeys(x for o in holders for x in getattr(o, field)))

            new = Stmt(st.id, StmtKind.EXPR, st.line, st.start, st.end, st.parent,
                       st.control, defs=union("defs"),
                       uses=tuple(dict.fromkeys(union("uses") + union("cond_uses"))),
                       unevaluated=union("unevaluated"), sized=union("sized"),
                       loads=union("loads"), stores=union("stores"), calls=tuple(mine),
                       address_taken=union("address_taken"))
            calls_e[st.id] = e
        stmts[st.id] = new
        for o in inside[1:]:
            stmts[o.id] = Stmt(o.id, StmtKind.NULL, o.line, o.start, o.end, None, None,
                               spelled=False, from_macro=True)
    if all(a is b for a, b in zip(stmts, fn.stmts, strict=True)):
        return fn, {}
    return replace(fn, stmts=tuple(stmts)), calls_e


def _only_checks(fn: Function, inside: list[Stmt], holders: list[Stmt],
                 mine: list[Call]) -> bool:
    """Whether what a macro statement does besides the call it must make (its calls
    `mine`, in statements `holders`) can only report and end the process: a `do { }
    while (0)` around, `if` statements without `else` whose branch only prints and exits,
    nothing else that loops, jumps, declares or sets a variable (but the call's own
    arguments), and none of the file's own statements captured (`if (c) CHECK(x); else
    ...` gives the macro's `if` the file's `else`)."""
    own = {a.var for c in mine for a in c.args if a.var is not None}
    for o in inside:
        if o is not inside[0] and not o.from_macro:
            return False
        if o.kind == StmtKind.DO:
            if o.cond_uses or o.calls or o.uses:
                return False        # not `while (0)`
        elif o.kind == StmtKind.IF:
            if len(o.children) != 1:
                return False
        elif o.kind == StmtKind.EXPR:
            if o in holders:
                if any(k not in own for k in o.defs):
                    return False
            elif o.defs or not all(c.callee in EXITS or c.callee in _REPORTS for c in o.calls):
                return False
        elif o.kind not in (StmtKind.COMPOUND, StmtKind.NULL):
            return False
        if o.kind == StmtKind.IF and o in holders and any(k not in own for k in o.defs):
            return False
    return True


# Functions an anchored run may pass a copied `const char *` parameter to: they read a
# NUL-terminated string through it.
# (Not those bounded by a length: strncmp, a precision's %.*s.)
STRING_TAKERS = frozenset({
    "open", "open64", "fopen", "fopen64", "stat", "stat64", "lstat", "lstat64", "access",
    "strlen", "strcmp", "strcasecmp", "strchr", "strrchr", "strstr", "strcpy", "strcat",
    "strdup", "atoi", "atol", "atoll", "atof", "strtol", "strtoul", "strtoll", "strtoull",
    "strtod", "sscanf", "puts", "fputs", "getenv", "realpath", "foresight_pt_open",
    "foresight_pt_fopen"})


def _const_string(type_text: str) -> bool:
    """`const char *` (and `char const *`): a string an anchored run copies."""
    t = " ".join(type_text.replace("*", " * ").split())
    return t in ("const char *", "char const *", "const char * const", "char const * const")


def anchor_roots(program: Program, data: bytes,
                 unspelled: list | None = None) -> tuple[str, ...]:
    """The functions of a file without main where a prefetch thread's runs are anchored:
    those with external linkage (another file's code may call them), in file order.  Those
    whose name a macro makes (no anchor can be written there) go to UNSPELLED as
    (line, name)."""
    out = []
    for f in program.functions:
        body = f.stmts[0]
        head = data[f.start:body.start].decode("utf-8", "replace")
        head = re.sub(r"/\*.*?\*/|//[^\n]*", " ", head, flags=re.S)
        name = re.search(r"\b" + re.escape(f.name) + r"\s*\(", head)
        if name is None:
            if unspelled is not None and not f.internal and not re.search(r"\binline\b",
                                                                          head):
                unspelled.append((f.line, f.name))
            continue
        if f.internal or re.search(r"\b(inline|__inline|__inline__)\b", head[:name.start()]):
            continue
        out.append(f.name)
    return tuple(out)


def slice_program(program: Program, data: bytes | None = None,
                  roots: tuple[str, ...] = ("main",)) -> Slice:
    """The slice of `program`, whose file's bytes are `data` (read from program.file if
    not given).  The slice's program is `program` with its macros' statements as
    macro_statements() has them."""
    if data is None:
        data = Path(program.file).read_bytes()
    names = {f.name for f in program.functions}
    functions, reduced = [], {}
    for f in program.functions:
        g, calls = macro_statements(f, data, names)
        functions.append(g)
        reduced.update({(f.name, sid): e for sid, e in calls.items()})
    program = replace(program, functions=tuple(functions))
    import sys
    # The fixed point recurses through statements, variables and calls.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        slicer = _Slicer(program, data, roots)
        slicer.s.reduced.update(reduced)
        return slicer.run()
    finally:
        sys.setrecursionlimit(limit)
