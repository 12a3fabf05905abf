"""What libclang's Python bindings (18.x) lack or do slowly, wrapped with ctypes.

The shared library exports operator kinds, constant evaluation and a variable's
initialiser; the bindings do not expose them, so this module declares the C functions
once.  It also asks for file offsets and cursor kinds the quick way (the front end asks
hundreds of thousands of times per 1,000 lines, and the bindings' own way makes a file
object and three integers per offset, and checks every kind id), and reads its strings
as the front end reads the file.
"""

from __future__ import annotations

import ctypes
from functools import cache

import clang.cindex as ci


@cache
def _lib():
    lib = ci.conf.lib
    for name in ("clang_getCursorBinaryOperatorKind", "clang_getCursorUnaryOperatorKind"):
        fn = getattr(lib, name)
        fn.argtypes = [ci.Cursor]
        fn.restype = ctypes.c_int
    for name in ("clang_getBinaryOperatorKindSpelling", "clang_getUnaryOperatorKindSpelling"):
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_int]
        fn.restype = ci._CXString
        fn.errcheck = ci._CXString.from_result
    lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_dispose.restype = None
    lib.clang_Cursor_getVarDeclInitializer.argtypes = [ci.Cursor]
    lib.clang_Cursor_getVarDeclInitializer.restype = ci.Cursor
    lib.clang_Cursor_getVarDeclInitializer.errcheck = ci.Cursor.from_result
    lib.clang_getFileContents.argtypes = [ci.TranslationUnit, ci.File,
                                          ctypes.POINTER(ctypes.c_size_t)]
    lib.clang_getFileContents.restype = ctypes.c_void_p
    lib.clang_getSpellingLocation.argtypes = [ci.SourceLocation, ctypes.POINTER(ci.c_object_p),
                                              ctypes.POINTER(ctypes.c_uint),
                                              ctypes.POINTER(ctypes.c_uint),
                                              ctypes.POINTER(ctypes.c_uint)]
    lib.clang_getSpellingLocation.restype = None
    return lib


def offset(location: ci.SourceLocation) -> int:
    """`location.offset` (in whichever file the location is), without the bindings' file
    object, line and column."""
    o = ctypes.c_uint()
    _lib().clang_getInstantiationLocation(location, None, None, None, ctypes.byref(o))
    return o.value


# File names by (source manager, file) of a live translation unit: libclang's bindings
# make a File object and ask its name at every `location.file`.
_FILES: dict[tuple[int | None, int | None], str] = {}
# Where the main file lies among the raw source locations of each live translation
# unit's source manager: [low, high], the raw encodings of its offsets 0 and its size,
# and its name as file_offset() gives it.
_NOWHERE = (1, 0, None)
_MAIN: dict[int | None, tuple[int, int, str | None]] = {None: _NOWHERE}


# Other modules' facts kept by libclang's addresses (unit_cache()).
_UNIT_CACHES: list[dict] = []


def unit_cache() -> dict:
    """A dict for facts keyed by addresses into live translation units, emptied with
    forget_files()."""
    d: dict = {}
    _UNIT_CACHES.append(d)
    return d


def forget_files() -> None:
    """Drop the file names, main-file spans and unit_cache() facts kept here (a new
    translation unit: its addresses may be those of a freed one)."""
    _FILES.clear()
    _MAIN.clear()
    _MAIN[None] = _NOWHERE
    for d in _UNIT_CACHES:
        d.clear()


def remember_main(tu: ci.TranslationUnit) -> None:
    """Note where `tu`'s main file lies (_main_span), so file_offset() answers for its
    locations without asking libclang."""
    _main_span(tu)


def _main_span(tu: ci.TranslationUnit,
               manager: int | None = None) -> tuple[int, int, str | None]:
    """[low, high] of the raw encodings (SourceLocation::getRawEncoding: a file location
    is its offset in the source manager's space, a macro's has the top bit set) of
    `tu`'s main file, and the file's name, kept for its source manager (`manager` when
    the caller has one from a location, which must be the same); (1, 0, None),
    matching nothing, when libclang does not say."""
    span = _NOWHERE
    try:
        here = tu.get_file(tu.spelling)
        at = ci.SourceLocation.from_offset(tu, here, 0)
    except Exception:   # noqa: BLE001 - a file libclang cannot name: the slow way
        if manager is not None:
            _MAIN[manager] = span
        return span
    if manager is None:
        manager = at.ptr_data[0]
    size = ctypes.c_size_t()
    if at.ptr_data[0] == manager and _lib().clang_getFileContents(
            tu, here, ctypes.byref(size)):
        name, zero = _file_offset(at)
        if name is not None and zero == 0:
            span = (at.int_data, at.int_data + size.value, name)
    _MAIN[manager] = span
    return span


def extent_offsets(c: ci.Cursor) -> tuple[int, int]:
    """(offset(c.extent.start), offset(c.extent.end)), read from the range's raw
    encodings when both ends are in the main file (no call into libclang beyond the
    extent the bindings keep), else asked as offset() asks."""
    r = c.extent
    manager = r.ptr_data[0]
    low, high, _ = _MAIN.get(manager) or _main_span(c.translation_unit, manager)
    b, e = r.begin_int_data, r.end_int_data
    return (b - low if low <= b <= high else offset(r.start),
            e - low if low <= e <= high else offset(r.end))


def lex(tu: ci.TranslationUnit, data: bytes, start: int,
        end: int) -> list[tuple[str, ci.TokenKind, int, int]]:
    """(spelling, kind, start, end) of the tokens of bytes [start, end) of `tu`'s main
    file (whose bytes are `data`), comments left out.  libclang's tokens carry their
    kind, raw location and length (CXToken.int_data), so only a name written with a
    line splice, trigraph or universal character name asks libclang its spelling.  The
    spellings are `data`'s: where libclang parsed a copy with compiler-identity names
    renamed (unit._as_cc_sees, same length), the file's own names, as cc reads them."""
    here = tu.get_file(tu.spelling)
    span = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(tu, here, start),
                                         ci.SourceLocation.from_offset(tu, here, end))
    low, high, _ = _MAIN.get(span.ptr_data[0]) or _main_span(tu, span.ptr_data[0])
    memory, count = ctypes.POINTER(ci.Token)(), ctypes.c_uint()
    ci.conf.lib.clang_tokenize(tu, span, ctypes.byref(memory), ctypes.byref(count))
    n = int(count.value)
    if n < 1:
        return []
    out = []
    try:
        kinds = ci.TokenKind.from_value
        for t in ctypes.cast(memory, ctypes.POINTER(ci.Token * n)).contents:
            kind_id, raw, length = t.int_data[0], t.int_data[1], t.int_data[2]
            if kind_id == _COMMENT:
                continue
            if low <= raw <= high:
                at = raw - low
                text = data[at:at + length]
                spelling = None
                if kind_id in _NAMES and (b"\\" in text or b"?" in text):
                    spelling = ci.conf.lib.clang_getTokenSpelling(tu, t)
            else:   # not the main file's text (never expected): libclang's own answers
                extent = ci.conf.lib.clang_getTokenExtent(tu, t)
                at, length = offset(extent.start), offset(extent.end) - offset(extent.start)
                spelling = ci.conf.lib.clang_getTokenSpelling(tu, t)
            if at >= end:
                break
            if spelling is None:
                spelling = data[at:at + length].decode("utf-8", "surrogateescape")
            out.append((spelling, kinds(kind_id), at, at + length))
    finally:
        ci.conf.lib.clang_disposeTokens(tu, memory, count)
    return out


_COMMENT = ci.TokenKind.COMMENT.value
_NAMES = {ci.TokenKind.IDENTIFIER.value, ci.TokenKind.KEYWORD.value}


def file_offset(location: ci.SourceLocation) -> tuple[str | None, int]:
    """(`str(location.file)` or None, `location.offset`): from the raw encoding in a
    main file remember_main() noted, else asked of libclang once."""
    low, high, name = _MAIN.get(location.ptr_data[0], _NOWHERE)
    raw = location.int_data
    if low <= raw <= high:
        return name, raw - low
    return _file_offset(location)


def spelling_offset(location: ci.SourceLocation) -> tuple[str | None, int]:
    """Where the characters of the token at `location` are, as (file name or None,
    offset): for code from a macro's argument its place in the macro call's text, which
    file_offset() gives as the whole call's start."""
    return _file_offset(location, "clang_getSpellingLocation")


def _file_offset(location: ci.SourceLocation, ask: str = "clang_getInstantiationLocation"
                 ) -> tuple[str | None, int]:
    """file_offset(), asked of libclang (`ask`: which of its locations)."""
    f, o = ci.c_object_p(), ctypes.c_uint()
    getattr(_lib(), ask)(location, ctypes.byref(f), None, None, ctypes.byref(o))
    if not f:
        return None, o.value
    key = (location.ptr_data[0], ctypes.cast(f, ctypes.c_void_p).value)
    name = _FILES.get(key)
    if name is None:
        name = _FILES[key] = ci.conf.lib.clang_getFileName(ci.File(f))
    return name, o.value


def _cursor_kind(cursor: ci.Cursor, kinds=ci.CursorKind._kinds) -> ci.CursorKind:
    """Cursor.kind: the kind its id names (the bindings' list, which they fill in place)."""
    try:
        kind = kinds[cursor._kind_id]
    except IndexError:
        kind = None
    if kind is None:
        raise ValueError(f"Unknown cursor kind {cursor._kind_id}")
    return kind


def _type_kind(t: ci.Type, kinds=ci.TypeKind._kinds) -> ci.TypeKind:
    """Type.kind, as _cursor_kind."""
    kind = kinds[t._kind_id] if t._kind_id < len(kinds) else None
    if kind is None:
        raise ValueError(f"Unknown type kind {t._kind_id}")
    return kind


def _string_value(self) -> str | None:
    """libclang's strings (spellings, names) as decode_source reads the file: UTF-8, any
    other byte kept (surrogateescape); the bindings' strict UTF-8 failed on a Latin-1
    string literal's token."""
    raw = ctypes.c_char_p.value.__get__(self)
    return None if raw is None else raw.decode("utf-8", "surrogateescape")


def _canonical(t: ci.Type) -> ci.Type:
    """Type.get_canonical(), asked of libclang once per type object (a cursor keeps its
    type object, and the analyses ask its canonical type again and again)."""
    canon = t.__dict__.get("_fs_canonical")
    if canon is None:
        canon = t._fs_canonical = ci.conf.lib.clang_getCanonicalType(t)
    return canon


class _Kept:
    """A cursor's property, asked once per cursor object and kept in its __dict__ under
    the property's name: a descriptor without __set__, so the kept value answers later
    asks as a plain attribute, with no call (the front end asks a cursor's kind 35 times
    on average).  Only for what a cursor object's answer never changes: its kind, and the
    properties libclang's bindings already keep on it after the first ask."""

    def __init__(self, name: str, ask):
        self.name, self.ask = name, ask

    def __get__(self, cursor, owner=None):
        if cursor is None:
            return self
        value = cursor.__dict__[self.name] = self.ask(cursor)
        return value


ci.c_interop_string.value = property(_string_value)
ci.Cursor.kind = _Kept("kind", _cursor_kind)
for _name in ("type", "referenced", "extent", "location", "spelling", "semantic_parent",
              "lexical_parent", "canonical", "storage_class", "hash"):
    setattr(ci.Cursor, _name, _Kept(_name, getattr(ci.Cursor, _name).fget))
ci.Type.kind = property(_type_kind, doc="The kind of this type.")
ci.Type.get_canonical = _canonical


# Operator spellings by libclang's operator kind (the same few dozen, asked for
# hundreds of thousands of operators).
_BINARY: dict[int, str] = {}
_UNARY: dict[int, str] = {1: "post++", 2: "post--", 3: "pre++", 4: "pre--"}


def binary_operator(cursor: ci.Cursor) -> str:
    """The operator's spelling, e.g. "+", "<=", "+=", "="."""
    lib = _lib()
    kind = lib.clang_getCursorBinaryOperatorKind(cursor)
    spelling = _BINARY.get(kind)
    if spelling is None:
        spelling = _BINARY[kind] = lib.clang_getBinaryOperatorKindSpelling(kind)
    return spelling


def unary_operator(cursor: ci.Cursor) -> str:
    """The operator's spelling; increments and decrements keep their prefix/postfix form."""
    lib = _lib()
    kind = lib.clang_getCursorUnaryOperatorKind(cursor)
    spelling = _UNARY.get(kind)
    if spelling is None:
        spelling = _UNARY[kind] = lib.clang_getUnaryOperatorKindSpelling(kind)
    return spelling


_CXEval_Int = 1


def evaluate_int(cursor: ci.Cursor) -> int | None:
    """The expression's value when it is an integer constant, else None."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        if lib.clang_EvalResult_getKind(res) != _CXEval_Int:
            return None
        if lib.clang_EvalResult_isUnsignedInt(res):
            return int(lib.clang_EvalResult_getAsUnsigned(res))
        return int(lib.clang_EvalResult_getAsLongLong(res))
    finally:
        lib.clang_EvalResult_dispose(res)


def var_initializer(cursor: ci.Cursor) -> ci.Cursor | None:
    """The initialiser of variable declaration `cursor` (`y + 1` of `int x = y + 1;`), or
    None: its other expression children (array sizes) look the same from Python."""
    return _lib().clang_Cursor_getVarDeclInitializer(cursor)
