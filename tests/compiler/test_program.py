"""The statement IR (program_ir.py, frontend/program.py) on small C files: what each
statement defines, uses and calls, its control parent, and what a slicer (issue 24) must
never lose."""

from __future__ import annotations

import dataclasses

import pytest

from foresight.compiler.frontend.program import parse_program
from foresight.compiler.program_ir import Function, Program, Scope, Stmt, StmtKind


def program(tmp_path, code: str, args: list[str] | None = None,
            name: str = "x.c") -> Program:
    src = tmp_path / name
    src.write_text(code)
    return parse_program(src, args or [])


def names(keys) -> set[str]:
    return {k[2] for k in keys}


def at(fn: Function, line: int, kind: StmtKind | None = None) -> Stmt:
    """The one statement of `fn` starting on `line` (of `kind`, if given)."""
    found = [s for s in fn.stmts if s.line == line and (kind is None or s.kind == kind)]
    assert len(found) == 1, [(s.kind, s.line) for s in found]
    return found[0]


def key_of(fn: Function, name: str, line: int):
    (v,) = [v for v in (*fn.params, *fn.locals, *fn.globals)
            if v.name == name and v.line == line]
    return v.key


def test_assignments_compound_assignments_increments_and_initialisers(tmp_path):
    fn = program(tmp_path, """\
int f(int a, int b)
{
    int x = a + 1, y;
    y = b * x;
    x += y;
    a++;
    --b;
    y = x = a;
    return x + y;
}
""").function("f")
    assert [v.name for v in fn.params] == ["a", "b"]
    assert all(v.scope == Scope.PARAM for v in fn.params)
    decl = at(fn, 3)
    assert decl.kind == StmtKind.DECL
    assert names(decl.declares) == {"x", "y"}
    assert names(decl.defs) == {"x"} and names(decl.uses) == {"a"}   # y has no initialiser
    assert (names(at(fn, 4).defs), names(at(fn, 4).uses)) == ({"y"}, {"b", "x"})
    assert (names(at(fn, 5).defs), names(at(fn, 5).uses)) == ({"x"}, {"x", "y"})
    assert (names(at(fn, 6).defs), names(at(fn, 6).uses)) == ({"a"}, {"a"})
    assert (names(at(fn, 7).defs), names(at(fn, 7).uses)) == ({"b"}, {"b"})
    assert (names(at(fn, 8).defs), names(at(fn, 8).uses)) == ({"x", "y"}, {"a"})
    ret = at(fn, 9)
    assert ret.kind == StmtKind.RETURN and names(ret.uses) == {"x", "y"} and not ret.defs
    # Byte ranges index the file's bytes and include the final ';'.
    data = (tmp_path / "x.c").read_bytes()
    assert data[at(fn, 5).start:at(fn, 5).end] == b"x += y;"
    assert data[decl.start:decl.end] == b"int x = a + 1, y;"


def test_shadowing_gives_the_inner_declaration_its_own_key(tmp_path):
    # The paper's example (Section 4.1): lines 4-5 are not in related_set(i) of line 7.
    fn = program(tmp_path, """\
#include <unistd.h>
void f(int fp)
{
    int i;
    i = 5;
    {   int i;
        i = 6;
    }
    lseek(fp, i, SEEK_SET);
}
""").function("f")
    outer, inner = key_of(fn, "i", 4), key_of(fn, "i", 6)
    assert outer != inner
    assert at(fn, 5).defs == (outer,)
    assert at(fn, 7).defs == (inner,)
    seek = at(fn, 9)
    assert outer in seek.uses and inner not in seek.uses
    (call,) = seek.calls
    assert call.callee == "lseek" and call.args[1].uses == (outer,)
    assert [v.scope for v in fn.locals] == [Scope.LOCAL, Scope.LOCAL]
    # The statements defining the outer i, as a slicer would look them up.
    assert [s.line for s in fn.stmts if outer in s.defs] == [5]


def test_calls_record_uses_and_pointer_arguments(tmp_path):
    fn = program(tmp_path, """\
#include <stdio.h>
#include <unistd.h>
void f(int fd, long n, char *p, const char *name)
{
    char buf[64];
    int k;
    read(fd, buf, n);
    read(fd, &k, sizeof k);
    read(fd, p + 8, 4);
    write(1, buf, 4);
    printf("%s %d\\n", name, k);
}
""").function("f")
    rd = at(fn, 7)
    (call,) = rd.calls
    assert call.callee == "read" and call.name == "read" and not call.indirect
    assert names(rd.uses) >= {"fd", "buf", "n"}
    fd, buf, n = call.args
    assert names(fd.uses) == {"fd"} and not fd.pointer
    assert buf.pointer and buf.writable and buf.text == "buf"
    assert buf.var == key_of(fn, "buf", 5)
    assert not n.pointer and names(n.uses) == {"n"}
    # The buffer may be written by the call; its address escapes.
    assert buf.var in rd.defs and buf.var in fn.address_taken
    # &k: k may be written by read().
    assert key_of(fn, "k", 6) in at(fn, 8).defs
    # Through a pointer parameter: a store via p, nothing dropped.
    (store,) = at(fn, 9).stores
    assert store.via == key_of(fn, "p", 3) and store.direct and not store.unknown
    # write() takes a const void *: the buffer is a pointer argument it does not write.
    wr = at(fn, 10).calls[0].args[1]
    assert wr.pointer and not wr.writable and not at(fn, 10).defs
    # printf: the format literal and the const char * are read only, k is used.
    pf = at(fn, 11)
    assert [a.writable for a in pf.calls[0].args] == [False, False, False]
    assert not pf.stores and names(pf.uses) == {"name", "k"}


def test_stores_through_pointers_and_whole_objects(tmp_path):
    fn = program(tmp_path, """\
struct rec { int n; char *name; };
void f(int *p, struct rec *r, char **pp, int i)
{
    int a[8];
    struct rec s;
    int *q = a;
    *p = 1;
    p[i] = 2;
    r->n = 3;
    **pp = 'x';
    a[i] = 4;
    s.n = 5;
    *q = a[1] + *p;
    f(p, &s, pp, i);
}
""").function("f")
    p, r, pp = (key_of(fn, x, 2) for x in ("p", "r", "pp"))
    a, s = key_of(fn, "a", 4), key_of(fn, "s", 5)
    assert at(fn, 6).defs == (key_of(fn, "q", 6),) and a in at(fn, 6).uses
    assert a in fn.address_taken          # q points into a
    for line, via in ((7, p), (8, p), (9, r)):
        st = at(fn, line)
        assert [(x.via, x.direct) for x in st.stores] == [(via, True)], line
        assert not st.defs
    assert names(at(fn, 8).uses) == {"p", "i"}
    # **pp: the pointer written through is loaded from *pp.
    deref = at(fn, 10)
    assert [(x.via, x.direct) for x in deref.stores] == [(pp, False)]
    assert [(x.via, x.direct) for x in deref.loads] == [(pp, True)]
    # An element of an array, a member of a struct: the whole object is defined.
    assert at(fn, 11).defs == (a,) and names(at(fn, 11).uses) == {"i"}
    assert at(fn, 12).defs == (s,)
    rd = at(fn, 13)
    assert [x.via for x in rd.stores] == [key_of(fn, "q", 6)]
    assert a in rd.uses and [x.via for x in rd.loads] == [p]
    # A recursive call passing pointers: each is a writable pointer argument.
    call = at(fn, 14).calls[0]
    assert [arg.writable for arg in call.args] == [True, True, True, False]
    assert s in at(fn, 14).defs and s in fn.address_taken


def test_control_parents_in_loops_ifs_and_switch(tmp_path):
    fn = program(tmp_path, """\
int f(int n, int *v)
{
    int t = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] > 0)
            t += v[i];
        else
            continue;
        switch (t) {
        case 1:
            t = 2;
            break;
        default:
            goto out;
        }
    }
    while (t > n)
        t--;
    do t++; while (t < 3);
out:
    return t;
}
""").function("f")
    body = fn.stmts[0]
    assert body.kind == StmtKind.COMPOUND and body.parent is None and body.control is None
    loop = at(fn, 4, StmtKind.FOR)
    assert loop.control is None and loop.parent == 0
    assert names(loop.declares) == {"i"} and names(loop.defs) == {"i"}
    assert names(loop.cond_uses) == {"i", "n"}
    branch = at(fn, 5, StmtKind.IF)
    assert branch.control == loop.id and names(branch.cond_uses) == {"v", "i"}
    add, cont = at(fn, 6), at(fn, 8)
    assert add.control == branch.id and add.parent == branch.id
    assert branch.children == (add.id, cont.id)
    assert cont.kind == StmtKind.CONTINUE and cont.target == loop.id
    sw = at(fn, 9, StmtKind.SWITCH)
    assert sw.control == loop.id and names(sw.cond_uses) == {"t"}
    set2, brk = at(fn, 11), at(fn, 12)
    assert set2.control == sw.id and set2.parent == at(fn, 10).id
    assert at(fn, 10).kind == StmtKind.CASE
    assert brk.kind == StmtKind.BREAK and brk.target == sw.id and brk.control == sw.id
    jump = at(fn, 14, StmtKind.GOTO)
    label = at(fn, 20, StmtKind.LABEL)
    assert jump.label == "out" and jump.target == label.id and label.label == "out"
    assert jump.parent == at(fn, 13).id and at(fn, 13).kind == StmtKind.CASE
    assert [c.id for c in fn.controls(jump.id)] == [sw.id, loop.id]
    wh = at(fn, 17, StmtKind.WHILE)
    assert names(wh.cond_uses) == {"t", "n"} and at(fn, 18).control == wh.id
    do = at(fn, 19, StmtKind.DO)
    assert names(do.cond_uses) == {"t"} and at(fn, 19, StmtKind.EXPR).control == do.id
    ret = at(fn, 21)
    assert ret.control is None and ret.parent == label.id
    # Everything inside the for, in preorder, starts with the for itself.
    inside = fn.within(loop.id)
    assert inside[0] == loop and add in inside and wh not in inside


def test_globals_touched_statics_and_block_scope_externs(tmp_path):
    prog = program(tmp_path, """\
int total;
static int calls = 0;
int unused;
int f(int n)
{
    static int seen;
    extern int total;
    seen += n;
    calls++;
    return total + seen;
}
int g(void) { return 1; }
""")
    fn = prog.function("f")
    assert {v.name for v in fn.globals} == {"calls", "total"}   # not unused
    assert all(v.scope == Scope.GLOBAL for v in fn.globals)
    (seen,) = [v for v in fn.locals if v.name == "seen"]
    assert seen.scope == Scope.STATIC
    # The block-scope extern is the file-scope total: one key.
    total = key_of(fn, "total", 1)
    assert total in at(fn, 10).uses and names(at(fn, 7).declares) == {"total"}
    assert key_of(fn, "calls", 2) in at(fn, 9).defs
    assert not prog.function("g").globals
    assert [v.name for v in prog.globals] == ["total", "calls", "unused"]
    assert [f.name for f in prog.functions] == ["f", "g"]
    with pytest.raises(KeyError):
        prog.function("h")


def test_function_pointer_calls_are_indirect(tmp_path):
    prog = program(tmp_path, """\
#include <stddef.h>
struct ops { long (*rd)(int, void *, size_t); };
static long myread(int fd, void *b, size_t n) { return fd + (long)n + (b != 0); }
static long other(int fd, void *b, size_t n) { return myread(fd, b, n); }
struct ops O = { .rd = myread };
long f(struct ops *ops, long (*fp)(int, void *, size_t), int fd, char *buf)
{
    long (*g)(int, void *, size_t) = other;
    return ops->rd(fd, buf, 4) + fp(fd, buf, 8) + (*g)(fd, buf, 2) + myread(fd, buf, 1);
}
""")
    fn = prog.function("f")
    calls = at(fn, 9).calls
    assert [c.name for c in calls] == ["indirect", "indirect", "indirect", "myread"]
    assert [c.indirect for c in calls] == [True, True, True, False]
    assert [c.target for c in calls] == ["ops->rd", "fp", "(*g)", "myread"]
    assert [names(c.callee_uses) for c in calls] == [{"ops"}, {"fp"}, {"g"}, set()]
    # Reading ops->rd is a load through ops; every call's buffer may be written.
    assert [x.via for x in at(fn, 9).loads] == [key_of(fn, "ops", 6)]
    assert all(c.args[1].writable and c.args[1].via == key_of(fn, "buf", 6) for c in calls)
    assert fn.function_refs == ("other",)
    # Named other than by a call: in an initialiser and in f; called only: not listed.
    assert prog.address_taken_functions == ("myread", "other")


def test_macro_expanded_statements(tmp_path):
    fn = program(tmp_path, """\
#include <unistd.h>
#define READ(x) read(fd, &x, sizeof x)
#define STEP { i++; n += i; }
int f(int fd)
{
    int i = 0, n = 0;
    READ(n);
    STEP
    return n;
}
""").function("f")
    rd = at(fn, 7)
    assert rd.kind == StmtKind.EXPR and rd.from_macro and rd.spelled
    data = (tmp_path / "x.c").read_bytes()
    assert data[rd.start:rd.end] == b"READ(n);"
    n = key_of(fn, "n", 6)
    assert n in rd.defs and {"fd", "n"} <= names(rd.uses)
    (call,) = rd.calls
    assert call.callee == "read" and call.args[1].var == n and call.args[1].writable
    step = at(fn, 8, StmtKind.COMPOUND)
    assert step.from_macro and step.spelled
    inc, add = (fn.stmts[c] for c in step.children)
    # The statements inside the expansion: modelled, but their text is the macro's call.
    assert (names(inc.defs), names(add.defs), names(add.uses)) == ({"i"}, {"n"}, {"n", "i"})
    assert not inc.spelled and not add.spelled and inc.line == 8
    assert not at(fn, 9).from_macro


def test_statements_from_an_include_and_unmodelled_statements(tmp_path):
    (tmp_path / "body.inc").write_text("n += 2;\nif (n) m = n;\n")
    code = """\
int f(int n, double *a)
{
    int m = 0;
#include "body.inc"
#pragma omp parallel for
    for (int i = 0; i < n; i++) a[i] = m;
    __asm__ volatile("" : "+r"(m));
    return m;
}
"""
    fn = program(tmp_path, code).function("f")
    data = (tmp_path / "x.c").read_bytes()
    add = next(s for s in fn.stmts if s.kind == StmtKind.EXPR and s.line == 4)
    # Placed at the #include that brought it in, and not to be copied as text.
    assert data[add.start:add.end].startswith(b'#include "body.inc"') and not add.spelled
    assert names(add.defs) == {"n"}
    branch = at(fn, 4, StmtKind.IF)
    assert names(branch.cond_uses) == {"n"}
    asm = at(fn, 7)
    assert asm.kind == StmtKind.OTHER and names(asm.defs) >= {"m"}
    assert any(x.unknown for x in asm.stores)
    # Under -fopenmp libclang hides the loop: the directive and its body are OTHER,
    # writing everything they mention, through every pointer, and any memory.
    omp = program(tmp_path, code, ["-fopenmp"]).function("f")
    hidden = [s for s in omp.stmts if s.kind == StmtKind.OTHER and s.line in (5, 6)]
    assert hidden and any({"a", "m"} <= names(s.defs) for s in hidden)
    assert any(x.via is not None and x.via[2] == "a" for s in hidden for x in s.stores)
    assert StmtKind.OTHER.is_control and StmtKind.FOR.is_loop


def test_the_statement_ir_is_frozen(tmp_path):
    fn = program(tmp_path, "int f(int a) { int b = a; return b; }\n").function("f")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fn.name = "g"           # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fn.stmts[1].defs = ()   # type: ignore[misc]
    assert isinstance(fn.stmts, tuple) and isinstance(fn.stmts[0].children, tuple)
    assert all(isinstance(s.uses, tuple) and isinstance(s.calls, tuple) for s in fn.stmts)
    assert fn.var(key_of(fn, "b", 1)).name == "b"


def test_sizeof_is_not_evaluated_and_pointers_loaded_from_arrays(tmp_path):
    fn = program(tmp_path, """\
void f(long n)
{
    char tmp[16];
    char *rows[4];
    n = sizeof tmp + sizeof(n = 3);
    *rows[1] = 'a';
    **rows = 'b';
}
""").function("f")
    size = at(fn, 5)
    tmp, rows = key_of(fn, "tmp", 3), key_of(fn, "rows", 4)
    # Neither the array's address nor the assignment inside sizeof happens.
    assert size.uses == (tmp,) and tmp not in fn.address_taken
    assert names(size.defs) == {"n"}
    # A pointer held in an array: a use of the array, a store through what it holds.
    for line in (6, 7):
        st = at(fn, line)
        assert rows in st.uses and not st.loads, line
        assert [(x.via, x.direct) for x in st.stores] == [(rows, False)], line
    assert rows not in fn.address_taken
