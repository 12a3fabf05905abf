"""Small facts about libclang cursors shared by the front end and the analyses."""

from __future__ import annotations

import clang.cindex as ci

K = ci.CursorKind
_TRANSPARENT = {K.UNEXPOSED_EXPR, K.PAREN_EXPR}
FLOAT_KINDS = {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.LONGDOUBLE}
INT_KINDS = {
    ci.TypeKind.BOOL, ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.USHORT,
    ci.TypeKind.UINT, ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG, ci.TypeKind.CHAR_S,
    ci.TypeKind.SCHAR, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
    ci.TypeKind.LONGLONG,
}
ARRAY_KINDS = {ci.TypeKind.CONSTANTARRAY, ci.TypeKind.VARIABLEARRAY,
               ci.TypeKind.INCOMPLETEARRAY}


def strip(c: ci.Cursor) -> ci.Cursor:
    """`c` without implicit conversions and parentheses around one child."""
    while c.kind in _TRANSPARENT:
        kids = list(c.get_children())
        if len(kids) != 1:
            break
        c = kids[0]
    return c


def decl_key(decl: ci.Cursor) -> tuple:
    """A declaration's identity across cursors: (file, offset, name) of its first
    declaration (a block-scope `extern int n;` is the file-scope `n`)."""
    loc = decl.canonical.location
    return (str(loc.file) if loc.file else "", loc.offset, decl.spelling)


def mark_variable(c: ci.Cursor, into: set) -> None:
    """Add to `into` the variable an assignment to `c` changes, if any: writing s.x
    changes the struct variable s; writing b[i] or p->x changes no variable."""
    c = strip(c)
    while c.kind == K.MEMBER_REF_EXPR:
        kids = list(c.get_children())
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
