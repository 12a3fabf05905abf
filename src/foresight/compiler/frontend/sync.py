"""Where a function may synchronise with other threads: facts for the front end.

A hint may load memory earlier than the program does: the index `b[i + d]` of an indirect
reference, a row pointer `A[i + d]`, a base `p->q` or a global read at nest entry.  In a
loop that never synchronises these loads are as race-free as the program's own later loads
of the same objects (nothing can order another thread's write between them).  Across an
acquire they are not: a consumer that waits on an atomic counter before reading `b[i]`
would get an early, racy read of `b[i + d]`.  So the front end treats every point listed
here as a barrier that no hint load may be hoisted across.

A synchronisation point is: an atomic operation or fence (`_Atomic` objects, `<stdatomic.h>`,
`__atomic_*`, `__sync_*`), an access to a `volatile` object, an `asm` statement, a call to a
thread, lock or signal function, a call through a function pointer, and a call to a
function that is neither defined in this file (and free of such points, transitively) nor
one of the C library's computational functions listed below.
"""

from __future__ import annotations

from collections.abc import Callable

import clang.cindex as ci

from foresight.compiler.frontend.cursors import children, preorder

K = ci.CursorKind

_SYNC_PREFIXES = ("__sync_", "__atomic_", "__c11_atomic_", "atomic_", "pthread_", "sem_",
                  "mtx_", "cnd_", "thrd_", "tss_", "sig")
_SYNC_CALLS = {"call_once", "sched_yield", "syscall", "futex", "raise", "kill", "pause",
               "setjmp", "longjmp", "_setjmp", "_longjmp"}
# <math.h> and <complex.h> functions that read only their arguments and write nothing
# but their result (frexp and modf, which store through a pointer, are not here).
MATH_CALLS = frozenset({
    "sqrt", "sqrtf", "sqrtl", "cbrt", "exp", "expf", "exp2", "expm1", "log", "logf", "log2",
    "log10", "log1p", "pow", "powf", "sin", "sinf", "cos", "cosf", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "fabs", "fabsf", "fabsl", "floor", "floorf",
    "ceil", "ceilf", "round", "lround", "trunc", "fmod", "fmin", "fmax", "fma", "hypot",
    "copysign", "ldexp", "erf", "erfc", "nearbyint", "rint", "lrint",
    "logl", "expl", "powl", "sinl", "cosl", "tanf", "asinf", "acosf", "atanf", "atan2f",
    "sinhf", "coshf", "tanhf", "log2f", "log10f", "log1pf", "expm1f", "cbrtf", "hypotf",
    "fmodf", "fminf", "fmaxf", "fmaf", "roundf", "truncf", "lroundf", "copysignf",
    "conj", "conjf", "creal", "crealf", "cimag", "cimagf", "cabs", "cabsf", "carg", "cargf",
    "cexp", "cexpf", "clog", "clogf", "cpow", "cpowf", "csqrt", "csqrtf", "csin", "csinf",
    "ccos", "ccosf",
})
# Library functions that compute or print without synchronising with the caller's other
# threads (their internal locks order no user data).
_QUIET_CALLS = MATH_CALLS | {
    "frexp", "modf",
    # <stdlib.h>, <string.h>
    "abs", "labs", "llabs", "div", "ldiv", "rand", "rand_r", "drand48", "erand48", "lrand48",
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "qsort",
    "bsearch", "atoi", "atol", "atof", "strtol", "strtoul", "strtod", "strtoll", "memcpy",
    "memmove", "memset", "memcmp", "memchr", "strlen", "strcmp", "strncmp", "strcpy",
    "strncpy", "strcat", "strchr", "strrchr", "strstr",
    # output and file I/O
    "printf", "fprintf", "sprintf", "snprintf", "puts", "fputs", "putchar", "fputc", "putc",
    "fwrite", "fread", "fflush", "read", "write", "pread", "pwrite", "lseek", "fseek",
    "ftell", "fgetc", "getc", "fgets",
    # clocks
    "clock_gettime", "gettimeofday", "time", "clock", "getrusage", "times",
    # the runtime's own calls
    "foresight_prefetch", "foresight_release",
}


# Expression kinds whose type may be atomic or volatile (a literal's never is), by kind.
_EXPRESSION: dict[ci.CursorKind, bool] = {}
_LITERALS = {K.INTEGER_LITERAL, K.FLOATING_LITERAL, K.IMAGINARY_LITERAL, K.STRING_LITERAL,
             K.CHARACTER_LITERAL}


def _atomic_or_volatile(t: ci.Type) -> bool:
    t = t.get_canonical()
    if t.kind == ci.TypeKind.ATOMIC or t.is_volatile_qualified():
        return True
    if t.kind == ci.TypeKind.POINTER:
        p = t.get_pointee()
        return p.get_canonical().kind == ci.TypeKind.ATOMIC or p.is_volatile_qualified()
    return False


def _atomic_builtin(c: ci.Cursor) -> str | None:
    """The name of the GNU atomic builtin `c` is (`__atomic_store_n(p, v, order)`, which
    libclang shows as an unexposed expression, not a call), or None.  Only expressions
    with two children or more are looked at: implicit conversions have one."""
    if len(children(c)) < 2:
        return None
    first = next(iter(c.get_tokens()), None)
    if first is not None and first.spelling.startswith(("__atomic_", "__c11_atomic_")):
        return first.spelling
    return None


class SyncPoints:
    """The synchronisation points of the functions of one translation unit."""

    def __init__(self, definitions: dict[str, ci.Cursor]):
        self.definitions = definitions            # USR -> function definition
        self._functions = CalleeFacts(definitions, self._own)
        # _atomic_or_volatile of each type met, by libclang's opaque pointer to it (with
        # its qualifiers; valid while this unit lives): most expressions share few types.
        self._types: dict[int | None, bool] = {}
        # Whether a reference to a declaration (by libclang's pointer to it) reads an
        # atomic or volatile object.
        self._decls: dict[int | None, bool] = {}

    def _special(self, t: ci.Type) -> bool:
        key = t.data[0]
        hit = self._types.get(key)
        if hit is None:
            hit = self._types[key] = _atomic_or_volatile(t)
        return hit

    def point(self, c: ci.Cursor) -> str | None:
        """Why `c` synchronises, or None."""
        if c.kind in (K.ASM_STMT, K.MS_ASM_STMT):
            return "an asm statement"
        if c.kind == K.CALL_EXPR:
            return self.call(c)
        if c.kind == K.UNEXPOSED_EXPR:
            name = _atomic_builtin(c)
            if name is not None:
                return f"an atomic operation ({name})"
        kind = c.kind
        if kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR) and c.referenced is not None:
            d = c.referenced
            special = self._decls.get(d.data[0])
            if special is None:
                special = self._decls[d.data[0]] = d.kind in (
                    K.VAR_DECL, K.PARM_DECL, K.FIELD_DECL) and self._special(d.type)
            if special:
                return f"an atomic or volatile object ({c.spelling})"
        if _EXPRESSION.get(kind) is None:
            _EXPRESSION[kind] = kind.is_expression() and kind not in _LITERALS
        if _EXPRESSION[kind]:
            t = c.type
            if t.kind != ci.TypeKind.INVALID and self._special(t):
                return "an atomic or volatile access"
        return None

    def call(self, c: ci.Cursor) -> str | None:
        callee = c.referenced
        if callee is None or callee.kind != K.FUNCTION_DECL:
            return "a call through a function pointer"
        name = callee.spelling
        if name.startswith(_SYNC_PREFIXES) or name in _SYNC_CALLS:
            return f"a call to {name}()"
        usr = callee.get_usr()
        if usr in self.definitions:
            why = self.function(usr)
            return None if why is None else f"a call to {name}(), which has {why}"
        return _library_call(name)

    def function(self, usr: str) -> str | None:
        """Why the function defined as `usr` may synchronise (transitively), or None."""
        return self._functions.reason(usr)

    def _own(self, fn: ci.Cursor) -> tuple[str | None, list[tuple[str, str]]]:
        """The first synchronisation point of `fn`'s own body (calls of functions of this
        file aside), or None, and those calls (CalleeFacts)."""
        calls = []
        for c in preorder(fn):
            callee = c.referenced if c.kind == K.CALL_EXPR else None
            if callee is not None and callee.kind == K.FUNCTION_DECL and \
                    callee.get_usr() in self.definitions and not (
                        callee.spelling.startswith(_SYNC_PREFIXES)
                        or callee.spelling in _SYNC_CALLS):
                calls.append((callee.get_usr(), callee.spelling))
                continue
            why = self.point(c)
            if why is not None:
                return why, calls
        return None, calls


def _library_call(name: str) -> str | None:
    """Why a call of `name`, a function not defined in this file, may synchronise."""
    if name in _QUIET_CALLS or name.startswith("__builtin_"):
        return None
    return f"a call to {name}(), defined elsewhere"


class CalleeFacts:
    """A property of the functions defined in one file that holds of a function when it
    holds of its own body and of every function of the file it calls, transitively and
    through recursion: per function, the first reason it does not (None: it holds).
    `own(definition)` gives the reason its own body breaks it (or None) and the calls it
    makes of functions of the file, as (USR, name).  Each question solves every function
    it reaches at once (a function in a cycle is judged with the whole cycle, never from
    a guess made while the cycle was being looked at)."""

    def __init__(self, definitions: dict[str, ci.Cursor],
                 own: Callable[[ci.Cursor], tuple[str | None, list[tuple[str, str]]]]):
        self.definitions, self.own = definitions, own
        self.known: dict[str, str | None] = {}

    def reason(self, usr: str) -> str | None:
        if usr not in self.known:
            self._solve(usr)
        return self.known[usr]

    def _solve(self, usr: str) -> None:
        facts: dict[str, tuple[str | None, list[tuple[str, str]]]] = {}
        order, queued = [usr], {usr}
        while len(facts) < len(order):
            u = order[len(facts)]
            facts[u] = self.own(self.definitions[u])
            for v, _ in facts[u][1]:
                if v not in self.known and v not in queued:
                    order.append(v)
                    queued.add(v)
        reasons = {u: f[0] for u, f in facts.items() if f[0] is not None}
        changed = True
        while changed:
            changed = False
            for u in order:
                if u in reasons:
                    continue
                for v, name in facts[u][1]:
                    why = reasons.get(v) if v in facts else self.known[v]
                    if why is not None:
                        reasons[u] = f"a call to {name}(), which has {why}"
                        changed = True
                        break
        for u in order:
            self.known[u] = reasons.get(u)
