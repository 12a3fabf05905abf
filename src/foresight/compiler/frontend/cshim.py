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


def forget_files() -> None:
    """Drop the file names kept by file_offset (a new translation unit: its addresses
    may be those of a freed one)."""
    _FILES.clear()


def file_offset(location: ci.SourceLocation) -> tuple[str | None, int]:
    """(`str(location.file)` or None, `location.offset`), asked of libclang once."""
    f, o = ci.c_object_p(), ctypes.c_uint()
    _lib().clang_getInstantiationLocation(location, ctypes.byref(f), None, None,
                                          ctypes.byref(o))
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


ci.c_interop_string.value = property(_string_value)
ci.Cursor.kind = property(_cursor_kind, doc="The kind of this cursor.")
ci.Type.kind = property(_type_kind, doc="The kind of this type.")


def binary_operator(cursor: ci.Cursor) -> str:
    """The operator's spelling, e.g. "+", "<=", "+=", "="."""
    lib = _lib()
    return lib.clang_getBinaryOperatorKindSpelling(lib.clang_getCursorBinaryOperatorKind(cursor))


def unary_operator(cursor: ci.Cursor) -> str:
    """The operator's spelling; increments and decrements keep their prefix/postfix form."""
    lib = _lib()
    kind = lib.clang_getCursorUnaryOperatorKind(cursor)
    spelling = lib.clang_getUnaryOperatorKindSpelling(kind)
    return {1: "post++", 2: "post--", 3: "pre++", 4: "pre--"}.get(kind, spelling)


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
