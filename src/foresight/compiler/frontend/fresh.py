"""Whether a loop nest only stores into memory allocated just before it.

`double *x = malloc(n * sizeof *x); if (x == NULL) ...; for (i = 0; i < n; i++) x[i] =
0;` touches each page of `x` for the first time: the kernel gives it a zero-filled page,
it is never read from swap or a file, so a prefetch has nothing to read.  Hints there
only cost: in core the nest's entry test and hinted copy keep cc from turning `malloc`
and the zeroing loop into `calloc` (`bench incore` stencil: 10-12% slower), and out of
core the releases behind the new pages page out, from a worker, what the kernel's
reclaim would write out anyway (a fill of 192 MiB under a 64 MiB cap: 1.25-1.43 s hinted
against 0.83-0.90 s with the fill left alone; docs/decisions.md).

The facts, from the syntax tree alone:
- every array, pointer or member access written in the nest is the target of a plain
  `=` whose address is an array subscript chain on a local pointer (`x[i]`, `A[i][j]`
  of `double (*A)[m]`, not `R[i][j]` through a loaded row pointer); calls are not
  looked into (what they read, the nest does not hint either);
- each store writes each element once, in address order: the innermost loop's
  variable is a term of the last subscript by itself, every outer loop's variable is
  in a subscript (in the last one only multiplied, `x[i * m + j]`), and no while, do or
  unanalysed for loop is around it;
- each such pointer is a plain local (not static, not volatile, address never taken)
  and its latest assignment is `p = ALLOC(...)` (also in a NULL test, `if ((p =
  ALLOC(...)) == NULL)`) or its declaration's initializer, in a
  statement of the same block as the nest and the same file; ALLOC is the C library's
  malloc, calloc, aligned_alloc, memalign, valloc or pvalloc (declared, not defined
  here; realloc keeps the old contents);
- every statement between that one and the nest mentions the pointer at most in the
  condition of an `if` holding no access to memory, call (but `__builtin_expect`),
  assignment or statement (the NULL test);
- the block holds no label, `case` or setjmp, so no jump runs the nest again without
  the allocation.
Memory malloc hands out again after a `free` may have been touched before, and glibc
serves requests under its mmap threshold (128 KiB, rising to 32 MiB after frees) from
such memory: there the nest's pages fault in from swap as they would unhinted.
"""

from __future__ import annotations

from collections.abc import Callable

import clang.cindex as ci

from foresight.compiler.frontend.cshim import binary_operator, unary_operator
from foresight.compiler.frontend.cursors import (
    ARRAY_KINDS,
    children,
    decl_key,
    preorder,
    start_of,
    strip,
)

K = ci.CursorKind
ALLOCATORS = {"malloc", "calloc", "aligned_alloc", "memalign", "valloc", "pvalloc"}
_JUMP_TARGETS = (K.LABEL_STMT, K.CASE_STMT, K.DEFAULT_STMT)
_SETJMP = {"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", "__builtin_setjmp", "savectx",
           "getcontext", "swapcontext"}


def first_touch(block: ci.Cursor, nest: ci.Cursor, loop_vars: dict[int, str],
                plain_local: Callable[[ci.Cursor], bool]) -> tuple[int, str] | None:
    """(line, names) of the allocation of the memory `nest`, a statement of `block`,
    only stores into for the first time, or None.  `loop_vars`: the offset of each of
    the nest's for statements -> its variable.  `plain_local(decl)`: `decl` is a
    non-volatile, non-static local whose address is never taken."""
    if block.kind != K.COMPOUND_STMT:
        return None
    bases = _stored_bases(nest, loop_vars)
    if not bases or not all(plain_local(d) for d in bases.values()):
        return None
    if any(d.kind in _JUMP_TARGETS or (d.kind == K.CALL_EXPR and d.spelling in _SETJMP)
           for d in preorder(block)):
        return None     # a jump (goto, case, longjmp) may run the nest again
    siblings = children(block)
    at = next((i for i, s in enumerate(siblings) if s == nest), None)
    if at is None:
        return None
    lines = []
    names = {d.spelling for d in bases.values()}
    for key in bases:
        st = _allocated_at(siblings[:at], key, names)
        # In this file: an allocation in an included fragment has no line here to name.
        if st is None or st.location.file is None or nest.location.file is None or \
                st.location.file.name != nest.location.file.name:
            return None
        lines.append(st.location.line)
    return max(lines), ", ".join(sorted(d.spelling for d in bases.values()))


def _stored_bases(nest: ci.Cursor, loop_vars: dict[int, str]) -> dict[tuple, ci.Cursor]:
    """The local pointers whose memory is the nest's only memory it accesses by name
    (calls are not looked into), each through the target of a plain `=` only, and
    stored in one pass in address order (below); empty when anything else is read or
    written through a pointer, an array or a member, or a pointer is used otherwise."""
    targets: set = set()      # subscript nodes that are the target chains of stores
    bases: dict[tuple, ci.Cursor] = {}
    base_refs: set = set()    # the DECL_REF_EXPR cursors at the bottom of those chains
    for c, loops in _with_loops(nest, loop_vars):
        if loops is None:
            return {}         # a while, a do or an unanalysed for: it may store again
        if c.kind != K.BINARY_OPERATOR or binary_operator(c) != "=":
            continue
        lhs = strip(children(c)[0])
        chain = []
        while lhs.kind == K.ARRAY_SUBSCRIPT_EXPR:
            chain.append(lhs)
            lhs = strip(children(lhs)[0])
        if not chain or lhs.kind != K.DECL_REF_EXPR or lhs.referenced is None:
            continue
        # `A[i][j]` of `double (*A)[m]` addresses one object; of `double **R` it loads the
        # row pointer R[i], a read of memory that may point anywhere.
        if any(k.type.get_canonical().kind not in ARRAY_KINDS for k in chain[1:]):
            continue
        decl = lhs.referenced
        if decl.type.get_canonical().kind != ci.TypeKind.POINTER:
            continue
        if not _one_pass([children(k)[1] for k in chain], loops) or \
                decl_key(decl) in bases:
            return {}         # two stores of one array (x[i] and x[n - 1 - i]) write twice
        targets.update(chain)
        base_refs.add(lhs)
        bases[decl_key(decl)] = decl
    for c in _evaluated(nest):
        if c.kind == K.ARRAY_SUBSCRIPT_EXPR and c not in targets:
            return {}
        if c.kind == K.UNARY_OPERATOR and unary_operator(c) == "*":
            return {}
        if c.kind == K.MEMBER_REF_EXPR:
            return {}
        if (c.kind == K.DECL_REF_EXPR and c not in base_refs and c.referenced is not None
                and decl_key(c.referenced) in bases):
            return {}      # the pointer used otherwise: copied, passed, compared
    return bases


def _with_loops(nest: ci.Cursor, loop_vars: dict[int, str]):
    """The nest's cursors (as _evaluated) each with the variables (decl keys) of the for
    statements around it, outermost first; None for those inside a loop that is not one
    of the nest's counted for statements."""
    stack: list[tuple[ci.Cursor, tuple[tuple, ...] | None]] = [(nest, ())]
    while stack:
        d, loops = stack.pop()
        if loops is not None:
            if d.kind == K.FOR_STMT:
                var = _loop_variable(d) if start_of(d) in loop_vars else None
                loops = None if var is None else (*loops, var)
            elif d.kind in (K.WHILE_STMT, K.DO_STMT):
                loops = None
        yield d, loops
        if not _unevaluated(d):
            stack.extend((k, loops) for k in reversed(children(d)))


def _loop_variable(loop: ci.Cursor) -> tuple | None:
    """The decl key of the variable a counted for statement initialises."""
    init = children(loop)[0] if children(loop) else None
    if init is not None and init.kind == K.DECL_STMT:
        decls = [k for k in children(init) if k.kind == K.VAR_DECL]
        return decl_key(decls[0]) if len(decls) == 1 else None
    if init is not None and init.kind == K.BINARY_OPERATOR and binary_operator(init) == "=":
        lhs = strip(children(init)[0])
        if lhs.kind == K.DECL_REF_EXPR and lhs.referenced is not None:
            return decl_key(lhs.referenced)
    return None


def _terms(e: ci.Cursor, sign: int = 1) -> list[tuple[int, ci.Cursor]]:
    """The signed terms of a sum or difference, `i * m + j - 1` -> [+i * m, +j, -1]."""
    e = strip(e)
    if e.kind == K.BINARY_OPERATOR and binary_operator(e) in ("+", "-"):
        a, b = children(e)
        return _terms(a, sign) + _terms(b, sign if binary_operator(e) == "+" else -sign)
    return [(sign, e)]


def _names(e: ci.Cursor) -> set[tuple]:
    """The variables (decl keys) expression `e` reads."""
    return {decl_key(d.referenced) for d in _evaluated(e)
            if d.kind == K.DECL_REF_EXPR and d.referenced is not None}


def _is_var(e: ci.Cursor, key: tuple) -> bool:
    return e.kind == K.DECL_REF_EXPR and e.referenced is not None and \
        decl_key(e.referenced) == key


def _scaled(e: ci.Cursor, key: tuple) -> bool:
    """`e` is `v * s` or `s * v` for variable `key`, s not a literal and not naming it
    (a row's length, `i * m`, not `2 * i`, whose rows overlap)."""
    if e.kind != K.BINARY_OPERATOR or binary_operator(e) != "*":
        return False
    a, b = (strip(k) for k in children(e))
    for v, scale in ((a, b), (b, a)):
        if _is_var(v, key):
            return scale.kind != K.INTEGER_LITERAL and key not in _names(scale)
    return False


def _one_pass(indices: list[ci.Cursor], loops: tuple[tuple, ...]) -> bool:
    """Whether a store with these subscripts (innermost dimension first) writes each
    element once, in address order, in the loops around it: the innermost loop's
    variable is an added term of the last subscript by itself (stride one element) and
    named nowhere else; every outer loop's variable is a subscript of its own
    (`A[i][j]`) or, in the last one, an added term times a row length (`x[i * m + j]`),
    and named nowhere else (not `x[i + j]`, `x[2 * i + j]`, `u[t % 2][j]`)."""
    if not loops:
        return False
    inner, outer = loops[-1], loops[:-1]
    last = _terms(indices[0])
    if sum(1 for sign, t in last if sign > 0 and _is_var(t, inner)) != 1:
        return False
    if any(inner in _names(t) for _, t in last if not _is_var(t, inner)) or \
            any(inner in _names(i) for i in indices[1:]):
        return False
    for v in outer:
        own = sum(1 for i in indices[1:] if _is_var(strip(i), v))
        scaled = sum(1 for sign, t in last if sign > 0 and _scaled(t, v))
        mentions = sum(1 for i in indices[1:] if v in _names(i)) + \
            sum(1 for _, t in last if v in _names(t))
        if own + scaled != 1 or mentions != 1:
            return False
    return True


def _allocated_at(before: tuple[ci.Cursor, ...], key: tuple,
                  names: set[str]) -> ci.Cursor | None:
    """The statement among `before` (the block's statements up to the nest)
    that last gave variable `key` a new allocation, when each statement after it mentions
    the variable only in a NULL test (of `names`); None otherwise."""
    for st in reversed(before):
        if not _mentions(st, key):
            continue
        if _allocation(st, key, names):
            return st
        if not _null_test(st, key, names):
            return None
    return None


def _unevaluated(d: ci.Cursor) -> bool:
    """`d` is a `sizeof` or `_Alignof` whose operand needs no look: it has no `[` (C
    evaluates the operand of a variable-length array's `sizeof`, `sizeof(char[f(x)])`),
    and calls, subscripts, assigns and holds no statement (`sizeof *p`)."""
    if d.kind != K.CXX_UNARY_EXPR:
        return False
    if any(t.spelling == "[" for t in d.get_tokens()):
        return False      # maybe a variable-length array: `sizeof(char[*p + 1])`
    for k in preorder(d):
        if k.kind in (K.CALL_EXPR, K.ARRAY_SUBSCRIPT_EXPR, K.COMPOUND_ASSIGNMENT_OPERATOR,
                      K.MEMBER_REF_EXPR) or k.kind.is_statement():
            return False
        if k.kind == K.BINARY_OPERATOR and binary_operator(k) == "=":
            return False
        if k.kind == K.UNARY_OPERATOR and unary_operator(k) in (
                "post++", "post--", "pre++", "pre--"):
            return False
    return True


def _evaluated(c: ci.Cursor):
    """`c` and its descendants depth first, but not the operand of a `sizeof` or
    `_Alignof` that needs no look (`malloc(n * sizeof *p)`)."""
    stack = [c]
    while stack:
        d = stack.pop()
        yield d
        if not _unevaluated(d):
            stack.extend(reversed(children(d)))


def _opaque(d: ci.Cursor) -> bool:
    """An expression libclang does not expose (`A == NULL || B == NULL` in some
    conditions): nothing inside it is visible but its tokens."""
    return d.kind == K.UNEXPOSED_EXPR and not children(d)


def _mentions(c: ci.Cursor, key: tuple) -> bool:
    """Whether `c` declares or names variable `key` (other than under `sizeof`), or may:
    an expression libclang does not expose names it if one of its tokens is the name."""
    for d in _evaluated(c):
        if d.kind == K.VAR_DECL and decl_key(d) == key:
            return True
        if d.kind == K.DECL_REF_EXPR and d.referenced is not None and \
                decl_key(d.referenced) == key:
            return True
        if _opaque(d) and any(t.spelling == key[2] for t in d.get_tokens()):
            return True
    return False


def _initializer(d: ci.Cursor) -> ci.Cursor | None:
    """The initializer of variable declaration `d`: the expression after its `=` (the
    array bounds of `double (*A)[m]` are expressions among its children too)."""
    eq = next((t for t in d.get_tokens() if t.spelling == "="), None)
    if eq is None:
        return None
    after = [k for k in children(d) if k.kind.is_expression()
             and k.extent.start.offset > eq.extent.start.offset]
    return after[0] if len(after) == 1 else None


def _assigned(st: ci.Cursor, key: tuple) -> ci.Cursor | None:
    """The value of assignment `st` when it assigns variable `key`."""
    lhs, rhs = (strip(k) for k in children(st))
    if lhs.kind == K.DECL_REF_EXPR and lhs.referenced is not None and \
            decl_key(lhs.referenced) == key:
        return rhs
    return None


def _allocation(st: ci.Cursor, key: tuple, names: set[str]) -> bool:
    """Whether `st` is `T *p = ALLOC(...);`, `p = ALLOC(...);` or `if ((p = ALLOC(...))
    == NULL) ...` (a NULL test otherwise, its branches not naming p) for `key`, with
    nothing else in it."""
    value = None
    if st.kind == K.DECL_STMT:
        # `double *A = malloc(a), *B = malloc(b);`: the other declarators must not name it.
        for d in children(st):
            if d.kind == K.VAR_DECL and decl_key(d) == key:
                value = _initializer(d)
            elif _mentions(d, key):
                return False
    elif st.kind == K.BINARY_OPERATOR and binary_operator(st) == "=":
        value = _assigned(st, key)
    elif st.kind == K.IF_STMT:
        # `if ((p = malloc(n)) == NULL) ...`: the allocation inside a NULL test.
        cond, branches = children(st)[0], children(st)[1:]
        sets = [d for d in _evaluated(cond)
                if d.kind == K.BINARY_OPERATOR and binary_operator(d) == "="]
        if len(sets) != 1 or any(_mentions(b, key) for b in branches) or \
                not _pure_test(cond, names, skip=sets[0]):
            return False
        value = _assigned(sets[0], key)
    if value is None:
        return False
    call = strip(value)
    while call.kind == K.CSTYLE_CAST_EXPR:
        call = strip(children(call)[-1])
    if call.kind != K.CALL_EXPR or call.spelling not in ALLOCATORS:
        return False
    fn = call.referenced
    # The C library's: declared at file scope and not defined here (not a function
    # pointer, a member, or a function of the program's that happens to be so named).
    if fn is None or fn.kind != K.FUNCTION_DECL or fn.get_definition() is not None or \
            fn.semantic_parent is None or fn.semantic_parent.kind != K.TRANSLATION_UNIT or \
            fn.storage_class == ci.StorageClass.STATIC:
        return False
    if _mentions(call, key):
        return False     # p = malloc(f(p)): the old value read
    return True


_TEST_TOKENS = {"NULL", "0", "==", "!=", "!", "||", "&&", "(", ")"}


def _null_test(st: ci.Cursor, key: tuple, names: set[str]) -> bool:
    """`st` is an `if` whose condition is a test of the new pointers (_pure_test) and
    whose branches do not mention variable `key`."""
    if st.kind != K.IF_STMT:
        return False
    kids = children(st)
    return _pure_test(kids[0], names) and not any(_mentions(b, key) for b in kids[1:])


def _pure_test(cond: ci.Cursor, names: set[str], skip: ci.Cursor | None = None) -> bool:
    """`cond` (but for the subtree `skip`) reads no memory and calls, assigns and holds
    no statement.  A part libclang does not expose may hold only `names` (the new
    pointers), `NULL`, `0`, comparisons, `!`, `&&`, `||` and parentheses."""
    stack = [cond]
    while stack:
        d = stack.pop()
        if skip is not None and d == skip:
            continue
        if d.kind == K.CALL_EXPR and d.spelling == "__builtin_expect":
            stack.extend(children(d))      # `unlikely(!x)`: only a hint to the compiler
            continue
        if d.kind in (K.ARRAY_SUBSCRIPT_EXPR, K.MEMBER_REF_EXPR, K.CALL_EXPR,
                      K.COMPOUND_ASSIGNMENT_OPERATOR) or d.kind.is_statement():
            return False     # a statement: `({ asm(...); 0; })`
        if d.kind == K.UNARY_OPERATOR and unary_operator(d) in (
                "*", "&", "post++", "post--", "pre++", "pre--"):
            return False
        if d.kind == K.BINARY_OPERATOR and binary_operator(d) == "=":
            return False
        if _opaque(d) and not all(
                t.spelling in _TEST_TOKENS
                or (t.kind == ci.TokenKind.IDENTIFIER and t.spelling in names)
                for t in d.get_tokens()):
            return False
        if not _unevaluated(d):
            stack.extend(children(d))
    return True
