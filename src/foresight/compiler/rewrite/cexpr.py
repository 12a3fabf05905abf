"""A small C-expression builder: every address, bound and statement the hints add is
written through these functions, so the shapes of the generated C (where the casts and
parentheses go) live in one place.

Each function takes C text and returns C text.  Addresses and extents are computed in
uintptr_t, where arithmetic wraps (never signed overflow, never pointer arithmetic
that could leave an object); a value above UINTPTR_MAX / 2 stands for a negative one
(`negative`).  Look-ahead indices are in uintmax_t, signed comparisons of bounds in
intmax_t.  The functions do not simplify or add parentheses beyond what each one
documents: the generated text is part of the compiler's tested output.
"""

from __future__ import annotations

from collections.abc import Mapping

from foresight.compiler.ir import Affine, ArrayRef, Sym, sym_value

U = "uintptr_t"      # addresses, strides, extents (wrapping)
UMAX = "uintmax_t"   # look-ahead indices and counts
IMAX = "intmax_t"    # bounds compared as the program compares them

# A declarator of `decl`: a name, or a name and its initialiser.
Declarator = str | tuple[str, str]


# --- expressions -------------------------------------------------------------------

def paren(x: str) -> str:
    return f"({x})"


def cast(ty: str, x: str) -> str:
    """`x` (any expression) converted to `ty`: `(ty)(x)`."""
    return f"({ty})({x})"


def cast_atom(ty: str, x: str) -> str:
    """`x` converted to `ty` where `x` is a name, a literal, a call, a subscript or
    already in parentheses: `(ty)x`."""
    return f"({ty}){x}"


def literal(v: int) -> str:
    """The integer `v` (0 <= v < 2^64) as a uintptr_t constant; 2^63 and above need an
    unsigned literal (a signed one would not fit)."""
    return f"({U}){v}" + ("u" if v > 2**63 - 1 else "")


def plus(a: str, b: str) -> str:
    return f"{a} + {b}"


def minus(a: str, b: str) -> str:
    return f"{a} - {b}"


def times(a: str, b: str) -> str:
    return f"{a} * {b}"


def divide(a: str, b: str) -> str:
    return f"{a} / {b}"


def wsum(*terms: str) -> str:
    """The sum of `terms` in parentheses (each term already of the sum's type)."""
    return "(" + " + ".join(terms) + ")"


def ceil_div(a: str, b: str) -> str:
    """a / b rounded up, for b > 0: `(a + b - 1) / b`."""
    return f"({a} + {b} - 1) / {b}"


def align_up(x: str, n: int) -> str:
    """`x` rounded up to a multiple of the power of two `n`, in uintptr_t."""
    return f"({x} + {literal(n)} - 1) & ~({literal(n)} - 1)"


def cmp(a: str, op: str, b: str) -> str:
    return f"{a} {op} {b}"


def negative(x: str) -> str:
    """Whether the uintptr_t `x`, read as a signed value, is negative."""
    return f"{x} > UINTPTR_MAX / 2"


def all_of(*conditions: str) -> str:
    return " && ".join(conditions)


def any_of(*conditions: str) -> str:
    return " || ".join(conditions)


def negation(x: str) -> str:
    return f"!{x}"


def ternary(c: str, a: str, b: str) -> str:
    return f"{c} ? {a} : {b}"


def cond(c: str, a: str, b: str) -> str:
    """A conditional expression in parentheses."""
    return paren(ternary(c, a, b))


def minimum(a: str, b: str) -> str:
    """The smaller of `a` and `b` (names or constants: each is written twice)."""
    return cond(cmp(a, "<", b), a, b)


def bit_or(*flags: str) -> str:
    """Flags or'ed together; "0" for none."""
    return " | ".join(flags) or "0"


def call(fn: str, *args: str) -> str:
    return f"{fn}({', '.join(args)})"


def addr_of(name: str) -> str:
    return f"&{name}"


def index(array: str, i: str | int) -> str:
    return f"{array}[{i}]"


def load(like: str, address: str) -> str:
    """The object at `address` (C text), of the type of the expression `like`."""
    return f"*(__typeof__({like}) *){address}"


def post_inc(x: str) -> str:
    return f"{x}++"


def assign(x: str, v: str) -> str:
    """The assignment expression (a statement needs `stmt`)."""
    return f"{x} = {v}"


def init_list(*items: str) -> str:
    return "{" + ", ".join(items) + "}"


def string(s: str) -> str:
    """A C string literal of `s` on one line (a newline becomes a space)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def cleanup(fn: str) -> str:
    """The attribute that has `fn` called with the variable's address on leaving its scope."""
    return f"__attribute__((__cleanup__({fn})))"


# --- symbolic and affine values, addresses ------------------------------------------

def sym(a: Sym) -> str:
    """A symbolic integer (ir.Sym) in uintptr_t (wrapping) arithmetic: no signed overflow."""
    if not a:
        return "(uintptr_t)0"
    terms = []
    for m, v in sorted(a.items()):
        factors = [f"(uintptr_t)({atom})" for atom in m]
        if v != 1 or not factors:
            factors.insert(0, f"(uintptr_t){v}" if v >= 0 else f"(uintptr_t)0 - (uintptr_t){-v}")
        terms.append("(" + " * ".join(factors) + ")")
    return "(" + " + ".join(terms) + ")"


def affine(aff: Affine, subst: Mapping[str, str]) -> str:
    """An affine function of loop variables in uintptr_t, each variable replaced by its
    C text in `subst` (by its own name otherwise)."""
    terms = [times(sym(c), cast(U, subst.get(var, var))) for var, c in aff.coeffs.items()]
    return wsum(*terms, sym(aff.const))


def address(ref: ArrayRef, subst: Mapping[str, str], base: str | None = None) -> str:
    """The address of `ref` in uintptr_t, each loop variable replaced by its C text in
    `subst` (by itself otherwise), from `base` (C text) instead of the reference's own
    base when given."""
    off = ref.byte_offset()
    terms = [cast(U, ref.base if base is None else base)]
    for var, coeff in off.coeffs.items():
        terms.append(times(sym(coeff), paren(subst.get(var, cast(U, var)))))
    if off.const:
        terms.append(sym(off.const))
    return wsum(*terms)


def abs_value(x: str) -> str:
    """|x| of a uintptr_t read as signed (`x` is written three times)."""
    return cond(negative(paren(x)), minus(literal(0), paren(x)), paren(x))


def wrapped_abs(v: int) -> int:
    """|v| as the generated code computes it: v wraps to 64 bits, and a value above
    UINTPTR_MAX / 2 stands for a negative one."""
    v %= 2**64
    return v if v <= (2**64 - 1) // 2 else 2**64 - v


def abs_sym(a: Sym, step: int = 1) -> str:
    """|a · step| in uintptr_t; folded when `a` is a constant."""
    c = sym_value(a)
    if c is None:
        return abs_value(times(sym(a), cast(U, str(step))) if step != 1 else sym(a))
    return literal(wrapped_abs(c * step))


def signed(a: Sym | None) -> str:
    """`a` evaluated in uintptr_t and read as a signed value (intmax_t); a constant is
    written as one (the most negative one without overflowing a literal)."""
    c = sym_value(a or {})
    if c is not None and -2**63 <= c < 2**63:
        return cast_atom(IMAX, str(c)) if c >= 0 else paren(minus(cast_atom(IMAX, str(c + 1)),
                                                                  "1"))
    return cast(IMAX, sym(a or {}))


# --- statements ---------------------------------------------------------------------

def const(ty: str) -> str:
    """The const-qualified type `ty`."""
    return f"const {ty}"


def stmt(expr: str) -> str:
    return f"{expr};"


def decl(ty: str, *declarators: Declarator) -> str:
    """A declaration of one or more names of type `ty` (a name or (name, initialiser));
    a pointer type `T *` goes next to its names."""
    parts = [d if isinstance(d, str) else f"{d[0]} = {d[1]}" for d in declarators]
    return f"{ty}{'' if ty.endswith('*') else ' '}{', '.join(parts)};"


def set_to(x: str, v: str) -> str:
    return stmt(assign(x, v))


def add_to(x: str, v: str) -> str:
    return f"{x} += {v};"


def decrement(x: str) -> str:
    return f"{x}--;"


def block(*stmts: str) -> str:
    return "{ " + " ".join(stmts) + " }"


def if_(c: str, then: str) -> str:
    """`if (c) then`; `then` is one statement (a `block` for several)."""
    return f"if ({c}) {then}"


def if_head(c: str) -> str:
    """`if (c) `: the head of an if whose statement is text already in the file."""
    return f"if ({c}) "


def if_chain(branches: list[tuple[str, str]], otherwise: str | None = None) -> str:
    """`if (c1) s1 else if (c2) s2 ... [else otherwise]`."""
    out = " else ".join(if_(c, s) for c, s in branches)
    return out if otherwise is None else f"{out} else {otherwise}"


def for_(init: str, test: str, step: str, body: str) -> str:
    return f"for ({init}; {test}; {step}) {body}"
