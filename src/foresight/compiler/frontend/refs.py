"""Array references in a loop body as ArrayRefs: the base (an array, an invariant
pointer, or a pointer read from memory such as a row pointer `A[i]` or a member
`p->q`), one affine subscript and byte stride per `[ ]`, and at most two levels of
indirection (`a[b[i]]`, `a[c[b[i]]]`); or why a reference cannot be analysed."""

from __future__ import annotations

from dataclasses import replace

import clang.cindex as ci

from foresight.compiler.frontend.cshim import (
    binary_operator,
    evaluate_int,
    file_offset,
    unary_operator,
)
from foresight.compiler.frontend.cursors import (
    ARRAY_KINDS,
    INT_KINDS,
    children,
    decl_key,
    preorder,
    strip,
)
from foresight.compiler.frontend.text import FunctionText
from foresight.compiler.frontend.values import Values
from foresight.compiler.ir import Affine, ArrayRef, Sym, sym_atom, sym_const

K = ci.CursorKind


class References:
    """The references of one function's nests (`walks`: the keys of its pointer-walk
    loop variables, whose value is an address; the loop builder adds them)."""

    def __init__(self, text: FunctionText, values: Values, walks: set[tuple]):
        self.t, self.v, self.walks = text, values, walks
        self.data = text.data

    def reference(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int,
                  conditional: bool) -> ArrayRef | str:
        """An ArrayRef for subscript expression `c`, or why it cannot be analysed."""
        # Made by a macro's body (`#define A(i, j) a[(i)*n + (j)]`): libclang places it at
        # the whole macro call, whose text is not this reference.  Its hints need no text
        # of it, only its base's name and subscripts' forms, which come from declarations
        # (not from the file's text): allowed for an array or invariant pointer variable
        # as its base, named in reports after the call.
        macro_made = False
        if not self.t.spelled(c):
            if not self.t.in_file(c):
                return ("written in a macro's argument or in an #include'd file: this "
                        "file's text there is not the reference")
            if self.t.reads_counter(c):
                return ("its text reads __COUNTER__, which repeating it in a hint would "
                        "advance")
            macro_made = True
        levels = []  # (index cursor, element type) from the innermost subscript outwards
        cur = c
        while cur.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, idx = children(cur)
            levels.append((idx, cur.type))
            inner = strip(base)
            # A[i][j] of `double **A`: A[i] is a pointer read from memory, the base.
            if (inner.kind == K.ARRAY_SUBSCRIPT_EXPR
                    and inner.type.get_canonical().kind in ARRAY_KINDS):
                cur = inner
                continue
            cur = inner
            break
        levels.reverse()
        if macro_made and (cur.kind != K.DECL_REF_EXPR or self.base(cur, nest_start) is None
                           or self.walk_var(cur, loops) is not None):
            return ("written inside a macro's expansion with a base other than an array or "
                    "pointer variable: the text there is the macro's call, not this reference")
        walk = self.walk_var(cur, loops)
        if walk is not None:
            return self.walk_ref(c, walk, levels, loops, nest_start, conditional)
        base_text, base_loops = self.base(cur, nest_start), ()
        loaded = base_text is None
        if loaded:
            sync = self.v.sync_in(nest_start)
            if sync is not None:
                return (f"the base is read from memory and the nest may synchronise with "
                        f"other threads ({sync}): no load is moved ahead of it")
            found = self.loaded_base(cur, loops, nest_start)
            if isinstance(found, str):
                return found
            base_text, base_loops, base_rows, base_loads = found
        elem = c.type
        elem_size = elem.get_size()
        if elem_size <= 0:
            return "element size unknown"
        strides: list[Sym] = []
        for depth, (_, t) in enumerate(levels):
            size = t.get_size()
            if size > 0:
                strides.append(sym_const(size))
            else:
                strides.append(sym_atom(f"sizeof({base_text}{'[0]' * (depth + 1)})"))
        subs: list[Affine] = []
        indirect = None
        for idx, _ in levels:
            aff = self.v.affine(idx, loops, nest_start)
            if aff is None:
                inner = strip(idx)
                # a[b[i]++] (a bucket's fill pointer): the index is read before or after
                # its increment; one element apart, the same page to prefetch.
                if inner.kind == K.UNARY_OPERATOR and unary_operator(inner) in (
                        "post++", "post--", "pre++", "pre--"):
                    inner = strip(children(inner)[0])
                # x[j] after `j = order[b];`: the indirect x[order[b]].
                if inner.kind == K.DECL_REF_EXPR:
                    inner = self.v.held_element(inner, nest_start) or inner
                if (inner.kind == K.ARRAY_SUBSCRIPT_EXPR and len(levels) == 1
                        and not macro_made
                        and INT_KINDS.__contains__(inner.type.get_canonical().kind)):
                    ix = self.reference(inner, loops, nest_start, conditional)
                    # a[b[i]] or a[c[b[i]]]: at most two levels of indirection
                    if isinstance(ix, ArrayRef) and (ix.indirect is None
                                                     or ix.indirect.indirect is None):
                        if loaded or ix.base_loaded or (ix.indirect is not None
                                                        and ix.indirect.base_loaded):
                            return "indirect reference through a base read from memory"
                        if inner.type.is_volatile_qualified():
                            return "indirect through a volatile index array"
                        sync = self.v.sync_in(nest_start)
                        if sync is not None:
                            return ("indirect, and the nest may synchronise with other "
                                    f"threads ({sync}): the index is not loaded ahead")
                        indirect = ix
                        continue
                return "index is not affine in the loop variables"
            subs.append(aff)
        text = f"{self.t.text(c)} ({base_text})" if macro_made else self.t.text(c)
        ref = ArrayRef(text=text, line=c.location.line, base=base_text,
                       subscripts=tuple(subs) if indirect is None else (),
                       strides=tuple(strides), elem_size=elem_size, is_write=False,
                       conditional=conditional, indirect=indirect,
                       object_bytes=None if loaded else self.object_bytes(cur),
                       base_decl=None if loaded else self.declared_at(cur))
        if loaded:
            end = self.v.nest_end.get(nest_start, len(self.data))
            ref = replace(ref, base_loaded=True, base_loops=base_loops, base_rows=base_rows,
                          base_chain=base_loads > 1,
                          base_writes=tuple(w for w in self.v.effects.pointer_stores
                                            if nest_start <= w < end))
        return ref

    def walk_var(self, c: ci.Cursor, loops: dict[tuple, str]) -> str | None:
        """The name of the pointer-walk loop variable `c` refers to, if it is one."""
        c = strip(c)
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
            key = decl_key(c.referenced)
            if key in self.walks and key in loops:
                return loops[key]
        return None

    def walk_ref(self, c: ci.Cursor, walk: str, levels: list, loops: dict[tuple, str],
                 nest_start: int, conditional: bool) -> ArrayRef | str:
        """`p[k]...` of a pointer-walk variable p: its address is (uintptr_t)p plus the
        subscripts, so the base is 0 and p a first subscript of one byte per unit."""
        subs, strides = [Affine({walk: sym_const(1)}, {})], [sym_const(1)]
        for idx, t in levels:
            aff = self.v.affine(idx, loops, nest_start)
            if aff is None:
                return "index is not affine in the loop variables"
            if t.get_size() <= 0:
                return "a pointer walk over rows of variable size"
            subs.append(aff)
            strides.append(sym_const(t.get_size()))
        if c.type.get_size() <= 0:
            return "element size unknown"
        return ArrayRef(text=self.t.text(c), line=c.location.line, base="0",
                        subscripts=tuple(subs), strides=tuple(strides),
                        elem_size=c.type.get_size(), is_write=False, conditional=conditional)

    def dereference(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int,
                    conditional: bool) -> ArrayRef | None:
        """`*p` or `*(p ± k)` of a pointer-walk variable p (k affine), as p[±k]; None for
        any other dereference (left to the body walk)."""
        if not self.t.spelled(c):
            return None
        kids = children(c)
        if len(kids) != 1:
            return None
        inner = strip(kids[0])
        walk, offset = self.walk_var(inner, loops), Affine()
        if walk is None and inner.kind == K.BINARY_OPERATOR and binary_operator(inner) in (
                "+", "-"):
            a, b = children(inner)
            walk = self.walk_var(a, loops)
            if walk is None and binary_operator(inner) == "+":
                a, b = b, a
                walk = self.walk_var(a, loops)
            aff = self.v.affine(b, loops, nest_start) if walk is not None else None
            if aff is None:
                return None
            offset = aff if binary_operator(inner) == "+" else aff.scaled(sym_const(-1))
        if walk is None:
            return None
        ref = self.walk_ref(c, walk, [], loops, nest_start, conditional)
        if isinstance(ref, str):
            return None
        return _extended(ref, offset, sym_const(ref.elem_size))

    def walk_member(self, c: ci.Cursor, loops: dict[tuple, str],
                    conditional: bool) -> ArrayRef | None:
        """`s->x` of a pointer-walk variable s over structs, as the bytes of x at its
        offset; None for any other member access (left to the body walk)."""
        if not self.t.spelled(c):
            return None
        kids = children(c)
        if len(kids) != 1 or c.referenced is None or c.referenced.kind != K.FIELD_DECL:
            return None
        walk = self.walk_var(kids[0], loops)
        if walk is None or c.referenced.is_bitfield() or c.type.get_size() <= 0:
            return None
        owner = strip(kids[0]).referenced
        if owner is None or self.t.member_op(strip(kids[0]), c) != "->":
            return None
        bits = c.referenced.get_field_offsetof()
        if bits < 0 or bits % 8:
            return None
        ref = self.walk_ref(c, walk, [], loops, 0, conditional)
        if isinstance(ref, str):
            return None
        return _extended(ref, Affine({}, sym_const(bits // 8)), sym_const(1))

    def loaded_base(self, c: ci.Cursor, loops: dict[tuple, str], nest_start: int
                    ) -> tuple[str, tuple[str, ...], tuple[str, Affine, int] | None, int] | str:
        """A base read from memory: the row pointer `A[i]` of `double **A` (A a base
        needing no load, a pointer member `g->rows`, or itself a row pointer, `T[i]` of
        `double ***T`; i affine in loop variables and invariant variables only, so its text
        can be evaluated again where the hints go) or the pointer member `p->q` of an
        invariant `p` (or a chain of them, member_chain).  Returns its text, the loop
        variables it depends on, for a row pointer whose row array needs at most one load
        (A, i, pointer bytes), and the number of loads; or why it cannot be used."""
        if c.type.is_volatile_qualified() or c.type.get_canonical().kind != ci.TypeKind.POINTER:
            return "the base is not a variable, array member or parameter"
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
            # `double *row = A[i];` in the nest, then row[j]: row stands for A[i].
            init = self.row_alias(c.referenced, nest_start)
            if isinstance(init, str):
                return f"the base pointer {c.spelling} {init}"
            return self.loaded_base(init, loops, nest_start)
        if c.kind == K.MEMBER_REF_EXPR:
            text = self.member_chain(c, nest_start)
            if text is None:
                return "the base pointer is read from memory through a pointer that may change"
            return text, (), None, text.count("->")
        if c.kind != K.ARRAY_SUBSCRIPT_EXPR:
            return "the base is not a variable, array member or parameter"
        rows, idx = children(c)
        rows = strip(rows)
        rows_text, rows_loops, rows_loads = self.base(rows, nest_start), (), 0
        if rows_text is None and rows.kind in (K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR):
            # g->rows[i][j]: the row array is a pointer member of an invariant g;
            # T[i][j][k] of double ***T: the row array T[i] is itself a row pointer
            found = self.loaded_base(rows, loops, nest_start)
            if not isinstance(found, str) and found[3] < 3:
                rows_text, rows_loops, _, rows_loads = found
        if rows_text is None:
            return "the base pointer is loaded from memory more than three times"
        aff = self.v.affine(idx, loops, nest_start)
        if aff is None:
            return "the row pointer's index is not affine in the loop variables"
        for d in preorder(idx):
            if d.kind == K.DECL_REF_EXPR and d.referenced is not None and d.referenced.kind in (
                    K.VAR_DECL, K.PARM_DECL):
                if (decl_key(d.referenced) not in loops
                        and not self.v.invariant_var(d.referenced, nest_start)):
                    return "the row pointer's index uses a variable defined inside the nest"
        depends = tuple(v for v in loops.values() if v in aff.coeffs or v in rows_loops)
        # Rows ahead read the row array at other indices: only one whose text does not
        # change with the loops (T[i] of T[i][j] does).
        ahead = (rows_text, aff, c.type.get_size()) if not rows_loops else None
        return self.t.text(c), depends, ahead, rows_loads + 1

    def row_alias(self, d: ci.Cursor, nest_start: int) -> ci.Cursor | str:
        """The initializer of a pointer `d` declared inside the nest and never changed
        after it (not assigned, address not taken, no pointer stored through memory in
        the nest), when it is a row pointer `A[i]` or a pointer member `p->q` written in
        this file: each use of d has its value, so a reference through d is one through
        it.  Otherwise why not, completing "the base pointer d ..."."""
        if (d.kind != K.VAR_DECL or d.storage_class == ci.StorageClass.STATIC
                or d.type.is_volatile_qualified() or d.location.file is None
                or d.location.offset < nest_start):
            return ("may change while the nest runs (written in it, or a global that a "
                    "call or a store may write)")
        key = decl_key(d)
        if key in self.v.effects.address_taken or self.v.effects.writes.get(key):
            return "is assigned or has its address taken after its declaration in the nest"
        init = [k for k in children(d) if k.kind.is_expression()]
        e = strip(init[0]) if len(init) == 1 else None
        if (e is None or e.kind not in (K.ARRAY_SUBSCRIPT_EXPR, K.MEMBER_REF_EXPR)
                or not self.t.spelled(e)):
            return "is declared in the nest with no row pointer or pointer member as its value"
        # A pointer stored through memory in the nest may change A[i] after d took it.
        end = self.v.nest_end.get(nest_start, len(self.t.data))
        if any(nest_start <= o < end for o in self.v.effects.pointer_stores):
            return ("is a row pointer taken before a pointer store in the nest, which may "
                    "change the row array")
        return e

    def member_chain(self, c: ci.Cursor, nest_start: int, links: int = 0) -> str | None:
        """The text of a pointer member read through invariant links: `p->q` of an
        invariant pointer p, or a chain of up to four loads (`S->g->v`, `s.g->v` of an
        invariant struct s); None otherwise.  Each link must be written `->` or `.` in
        the source right after its owner, so the text can be evaluated again."""
        kids = children(c)
        owner = strip(kids[0]) if len(kids) == 1 else None
        if owner is None or links > 3:
            return None
        op = self.t.member_op(owner, c)
        if op is None or owner.type.is_volatile_qualified():
            return None
        if owner.kind == K.DECL_REF_EXPR and owner.referenced is not None:
            if not self.v.invariant_var(owner.referenced, nest_start,
                                        c.type if op == "." else None):
                return None
            if op == "." and links == 0:
                return None   # s.p of a struct variable is not read through a pointer
            return f"{owner.referenced.spelling}{op}{c.spelling}"
        if owner.kind != K.MEMBER_REF_EXPR:
            return None
        inner = self.member_chain(owner, nest_start, links + (op == "->"))
        return None if inner is None else f"{inner}{op}{c.spelling}"

    def object_bytes(self, c: ci.Cursor) -> int | None:
        """Size of the object an array base names, when the source fixes it: an array
        of constant size, or a local pointer never written after its initializer
        `malloc(N)` / `calloc(N, M)` with constant arguments."""
        if c.type.get_canonical().kind == ci.TypeKind.CONSTANTARRAY and c.kind in (
                K.DECL_REF_EXPR, K.MEMBER_REF_EXPR):
            size = c.type.get_size()   # an array variable or member: its type's size
            if size > 0 and (c.kind == K.MEMBER_REF_EXPR or c.referenced is None
                             or c.referenced.kind == K.VAR_DECL):
                return size
        if c.kind != K.DECL_REF_EXPR or c.referenced is None:
            return None
        d = c.referenced
        kind = d.type.get_canonical().kind
        if kind == ci.TypeKind.CONSTANTARRAY and d.kind == K.VAR_DECL:
            size = d.type.get_size()
            return size if size > 0 else None
        if kind != ci.TypeKind.POINTER or d.kind != K.VAR_DECL:
            return None
        key = decl_key(d)
        if key in self.v.effects.writes or key in self.v.effects.address_taken:
            return None
        init = [k for k in children(d) if k.kind.is_expression()]
        if len(init) != 1:
            return None
        call = strip(init[0])
        while call.kind == K.CSTYLE_CAST_EXPR:
            kids = [k for k in children(call) if k.kind.is_expression()]
            if not kids:
                return None
            call = strip(kids[-1])
        if call.kind != K.CALL_EXPR or call.spelling not in ("malloc", "calloc"):
            return None
        args = [evaluate_int(a) for a in list(call.get_arguments())]
        if not args or any(a is None or a < 0 for a in args):
            return None
        if call.spelling == "malloc" and len(args) == 1:
            return args[0]
        if call.spelling == "calloc" and len(args) == 2:
            return args[0] * args[1]
        return None

    def declared_at(self, c: ci.Cursor) -> int | None:
        """Where the variable base `c` (`a`, `s.a`, `p->a`) names is declared: its offset
        in this file, -1 in another file, None when `c` names none."""
        if c.kind == K.MEMBER_REF_EXPR:
            kids = children(c)
            c = strip(kids[0]) if len(kids) == 1 else c
        if c.kind != K.DECL_REF_EXPR or c.referenced is None:
            return None
        where, offset = file_offset(c.referenced.extent.start)
        return offset if where == self.t.main else -1

    def base(self, c: ci.Cursor, nest_start: int) -> str | None:
        """C text of an array base whose address needs no load but of invariant variables."""
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
            d = c.referenced
            kind = d.type.get_canonical().kind
            if kind in ARRAY_KINDS:
                if d.kind in (K.VAR_DECL, K.PARM_DECL) and not d.type.is_volatile_qualified():
                    return d.spelling
                return None
            if kind == ci.TypeKind.POINTER and self.v.invariant_var(d, nest_start):
                return d.spelling
            return None
        if c.kind == K.MEMBER_REF_EXPR:
            kids = children(c)
            if len(kids) != 1:
                return None
            owner = strip(kids[0])
            if owner.kind != K.DECL_REF_EXPR or owner.referenced is None:
                return None
            member_kind = c.type.get_canonical().kind
            arrow = self.t.member_op(owner, c) == "->"
            od = owner.referenced
            if arrow:
                if member_kind in ARRAY_KINDS and self.v.invariant_var(od, nest_start):
                    return f"{od.spelling}->{c.spelling}"
                return None
            if od.type.is_volatile_qualified():
                return None
            if member_kind in ARRAY_KINDS and od.kind in (K.VAR_DECL, K.PARM_DECL):
                return f"{od.spelling}.{c.spelling}"
            if member_kind == ci.TypeKind.POINTER and self.v.invariant_var(od, nest_start,
                                                                          c.type):
                return f"{od.spelling}.{c.spelling}"
        return None


def _extended(ref: ArrayRef, sub: Affine, stride: Sym) -> ArrayRef:
    """`ref` with one more subscript and its stride (and the byte offset they make)."""
    return replace(ref, subscripts=(*ref.subscripts, sub), strides=(*ref.strides, stride),
                   offset=None)
