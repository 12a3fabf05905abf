"""Small facts about libclang cursors shared by the front end and the analyses."""

from __future__ import annotations

import clang.cindex as ci

from foresight.compiler.frontend.cshim import extent_offsets, file_offset, unit_cache

K = ci.CursorKind
_TRANSPARENT = {K.UNEXPOSED_EXPR, K.PAREN_EXPR}
INT_KINDS = {
    ci.TypeKind.BOOL, ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.USHORT,
    ci.TypeKind.UINT, ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG, ci.TypeKind.CHAR_S,
    ci.TypeKind.SCHAR, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
    ci.TypeKind.LONGLONG,
}
ARRAY_KINDS = {ci.TypeKind.CONSTANTARRAY, ci.TypeKind.VARIABLEARRAY,
               ci.TypeKind.INCOMPLETEARRAY}


def children(c: ci.Cursor) -> tuple[ci.Cursor, ...]:
    """`c`'s children, asked of libclang once per cursor object and kept on it: the
    front end walks each function many times, and every walk from the same cursor then
    reuses the same child objects (and the attributes libclang's bindings keep on them)."""
    kids = c.__dict__.get("_fs_children")
    if kids is None:
        kids = c._fs_children = tuple(c.get_children())
    return kids


def start_of(c: ci.Cursor) -> int:
    """The file offset where `c`'s extent starts, kept on the cursor as children() keeps
    its children (libclang's bindings make a new location object at each ask)."""
    at = c.__dict__.get("_fs_start")
    if at is None:
        c._fs_start, c._fs_end = at, _ = extent_offsets(c)
    return at


def end_of(c: ci.Cursor) -> int:
    """The file offset where `c`'s extent ends, kept on the cursor (as start_of())."""
    at = c.__dict__.get("_fs_end")
    if at is None:
        c._fs_start, c._fs_end = _, at = extent_offsets(c)
    return at


def preorder(c: ci.Cursor):
    """`c` and its descendants depth first, as `Cursor.walk_preorder`, through children():
    a slice of the list index_subtrees() made where it gave `c` one."""
    span = c.__dict__.get("_fs_span")
    if span is not None:
        order, start, end = span
        return iter(order[start:end])
    return _walk(c)


def _walk(c: ci.Cursor):
    stack = [c]
    while stack:
        d = stack.pop()
        yield d
        stack.extend(reversed(children(d)))


def subtree(c: ci.Cursor) -> tuple[list[ci.Cursor], int, int]:
    """(list, start, end): `c`'s subtree as list[start:end] in preorder, `c` first; listed
    now (index_subtrees) if no list has it yet."""
    span = c.__dict__.get("_fs_span")
    if span is None:
        index_subtrees(c)
        span = c._fs_span
    return span


def index_subtrees(root: ci.Cursor) -> None:
    """List `root`'s subtree in preorder once and give every cursor object in it its own
    subtree as a span of that list: the front end walks a function's nests, their loops
    and their bodies again and again, and each preorder() of them is then a slice."""
    order: list[ci.Cursor] = []
    stack: list[tuple[ci.Cursor, int]] = [(root, -1)]
    while stack:
        c, start = stack.pop()
        if start >= 0:      # its subtree is listed: close its span
            c._fs_span = (order, start, len(order))
            continue
        stack.append((c, len(order)))
        order.append(c)
        stack.extend((k, -1) for k in reversed(children(c)))


def strip(c: ci.Cursor) -> ci.Cursor:
    """`c` without implicit conversions and parentheses around one child."""
    while c.kind in _TRANSPARENT:
        kids = children(c)
        if len(kids) != 1:
            break
        c = kids[0]
    return c


# decl_key() by the cursor's own fields (kind, and libclang's pointers to the
# declaration or statement and to the unit): many cursors name the same declaration.
_DECL_KEYS = unit_cache()


def decl_key(decl: ci.Cursor) -> tuple:
    """A declaration's identity across cursors: (file, offset, name) of its first
    declaration (a block-scope `extern int n;` is the file-scope `n`)."""
    data = decl.data
    at = (decl._kind_id, data[0], data[1], data[2])
    key = _DECL_KEYS.get(at)
    if key is None:
        name, off = file_offset(decl.canonical.location)
        key = _DECL_KEYS[at] = (name or "", off, decl.spelling)
    return key


def mark_variable(c: ci.Cursor, into: set) -> None:
    """Add to `into` the variable an assignment to `c` changes, if any: writing s.x
    changes the struct variable s; writing b[i] or p->x changes no variable."""
    c = strip(c)
    while c.kind == K.MEMBER_REF_EXPR:
        kids = children(c)
        if not kids:
            return
        owner = strip(kids[0])
        if owner.type.get_canonical().kind == ci.TypeKind.POINTER:
            return
        c = owner
    if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
        into.add(decl_key(c.referenced))


def is_unsigned(t: ci.Type) -> bool:
    """Whether canonical type `t` is an unsigned integer type."""
    return t.kind in (ci.TypeKind.BOOL, ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR,
                      ci.TypeKind.USHORT, ci.TypeKind.UINT, ci.TypeKind.ULONG,
                      ci.TypeKind.ULONGLONG)


def runs_cleanup(c: ci.Cursor) -> bool:
    """Whether `c` declares a variable with `__attribute__((cleanup(f)))`: a call of f at
    the end of its scope, which the syntax tree shows as no call (libclang gives the
    attribute as an unexposed one; its tokens name it)."""
    return c.kind == ci.CursorKind.VAR_DECL and any(
        k.kind == ci.CursorKind.UNEXPOSED_ATTR
        and any(t.spelling in ("cleanup", "__cleanup__") for t in k.get_tokens())
        for k in children(c))
