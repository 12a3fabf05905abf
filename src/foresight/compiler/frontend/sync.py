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

import clang.cindex as ci

from foresight.compiler.frontend.cursors import children, preorder

K = ci.CursorKind

_SYNC_PREFIXES = ("__sync_", "__atomic_", "__c11_atomic_", "atomic_", "pthread_", "sem_",
                  "mtx_", "cnd_", "thrd_", "tss_", "sig")
_SYNC_CALLS = {"call_once", "sched_yield", "syscall", "futex", "raise", "kill", "pause",
               "setjmp", "longjmp", "_setjmp", "_longjmp"}
# Library functions that compute or print without synchronising with the caller's other
# threads (their internal locks order no user data).
_QUIET_CALLS = {
    # <math.h>
    "sqrt", "sqrtf", "sqrtl", "cbrt", "exp", "expf", "exp2", "expm1", "log", "logf", "log2",
    "log10", "log1p", "pow", "powf", "sin", "sinf", "cos", "cosf", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "fabs", "fabsf", "fabsl", "floor", "floorf",
    "ceil", "ceilf", "round", "lround", "trunc", "fmod", "fmin", "fmax", "fma", "hypot",
    "copysign", "ldexp", "frexp", "modf", "erf", "erfc", "nearbyint", "rint", "lrint",
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
    # the runtime's own calls
    "foresight_prefetch", "foresight_release",
}


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
        self._function: dict[str, str | None] = {}

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
        if c.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR) and c.referenced is not None \
                and c.referenced.kind in (K.VAR_DECL, K.PARM_DECL, K.FIELD_DECL) \
                and _atomic_or_volatile(c.referenced.type):
            return f"an atomic or volatile object ({c.spelling})"
        if c.kind.is_expression() and c.type.kind != ci.TypeKind.INVALID \
                and _atomic_or_volatile(c.type):
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
        if name in _QUIET_CALLS or name.startswith("__builtin_"):
            return None
        return f"a call to {name}(), defined elsewhere"

    def function(self, usr: str) -> str | None:
        """Why the function defined as `usr` may synchronise (transitively), or None."""
        if usr in self._function:
            return self._function[usr]
        self._function[usr] = None      # recursion: assume quiet while looking
        why = None
        for c in preorder(self.definitions[usr]):
            why = self.point(c)
            if why is not None:
                break
        self._function[usr] = why
        return why
