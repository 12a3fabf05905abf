"""The loop-nest IR: loops, array references with affine index functions.

An index is affine in the enclosing loop variables, f(i) = H·i + c, where the
entries of H and c may be symbolic (products of loop-invariant variables and
run-time sizes such as `sizeof(A[0])` for variably modified types).

Every class is a frozen dataclass: the front end builds each object once, and a later
stage that needs a changed one makes a copy (`dataclasses.replace`), so no stage adds
to or edits another stage's objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# A symbolic integer: {monomial: coefficient}; a monomial is a sorted tuple of C atoms
# (invariant variable names or run-time size expressions); () is the constant term.
Sym = dict[tuple[str, ...], int]


def sym_const(v: int) -> Sym:
    return {(): v} if v else {}


def sym_atom(atom: str) -> Sym:
    return {(atom,): 1}


def sym_add(a: Sym, b: Sym, sign: int = 1) -> Sym:
    out = dict(a)
    for m, v in b.items():
        out[m] = out.get(m, 0) + sign * v
        if out[m] == 0:
            del out[m]
    return out


def sym_mul(a: Sym, b: Sym) -> Sym:
    out: Sym = {}
    for ma, va in a.items():
        for mb, vb in b.items():
            m = tuple(sorted(ma + mb))
            out[m] = out.get(m, 0) + va * vb
            if out[m] == 0:
                del out[m]
    return out


def sym_value(a: Sym) -> int | None:
    """The integer value when `a` is a compile-time constant."""
    if not a:
        return 0
    if list(a) == [()]:
        return a[()]
    return None


def sym_str(a: Sym) -> str:
    """Readable form for reports."""
    if not a:
        return "0"
    parts = []
    for m, v in sorted(a.items()):
        atoms = "*".join(m)
        if not m:
            parts.append(str(v))
        elif v == 1:
            parts.append(atoms)
        else:
            parts.append(f"{v}*{atoms}")
    return " + ".join(parts)


@dataclass(frozen=True)
class Affine:
    """Σ coeffs[v]·v + const over loop variables v."""

    coeffs: dict[str, Sym] = field(default_factory=dict)
    const: Sym = field(default_factory=dict)

    def scaled(self, k: Sym) -> Affine:
        return Affine({v: sym_mul(c, k) for v, c in self.coeffs.items() if sym_mul(c, k)},
                      sym_mul(self.const, k))

    def plus(self, other: Affine, sign: int = 1) -> Affine:
        coeffs = dict(self.coeffs)
        for v, c in other.coeffs.items():
            s = sym_add(coeffs.get(v, {}), c, sign)
            if s:
                coeffs[v] = s
            else:
                coeffs.pop(v, None)
        return Affine(coeffs, sym_add(self.const, other.const, sign))

    def coeff(self, var: str) -> Sym:
        return self.coeffs.get(var, {})

    def __str__(self) -> str:
        parts = [f"({sym_str(c)})*{v}" for v, c in self.coeffs.items()]
        if self.const or not parts:
            parts.append(sym_str(self.const))
        return " + ".join(parts)


@dataclass(frozen=True)
class ArrayRef:
    """One array reference in a loop body, e.g. A[i][j+1] or a[b[i]]."""

    text: str                 # source text, for reports and per-site statistics
    line: int
    base: str                 # C expression for the array's address
    subscripts: tuple[Affine, ...]  # one per [ ], outermost first (empty for indirect)
    strides: tuple[Sym, ...]        # bytes per unit of each subscript
    elem_size: int
    is_write: bool
    conditional: bool         # not executed on every iteration of its innermost loop
    indirect: ArrayRef | None = None  # a[b[...]]: the index reference b[...]
    offset: Affine | None = None      # byte offset from base (None: from the subscripts)
    object_bytes: int | None = None   # size of the whole object, when the source fixes it
    # A base read from memory: the row pointer A[i] of `double **A`, or `p->q` for a pointer
    # member.  The loop variables it depends on (each iteration of those loops may start a
    # new object) and the offsets of the nest's writes of pointers through memory (any of
    # them might change it); see plan._loaded_base_unsafe.
    base_loaded: bool = False
    base_loops: tuple[str, ...] = ()
    base_writes: tuple[int, ...] = ()
    # The base is read through more than one pointer (S->g->v, g->rows[i]): the hints
    # dereference a loaded link themselves, so no call may change it under them.
    base_chain: bool = False
    # For a row pointer A[i]: the row array's text (a base needing no load, or a pointer
    # member such as g->rows), the row index as affine in the loop variables, and the
    # bytes of one row pointer; None for T[i][j] of double ***T (no rows ahead).
    base_rows: tuple[str, Affine, int] | None = None
    # Where the variable the base names is declared: its byte offset in this file, -1 when
    # declared in another file (an #include'd header), None when not known.  Code placed
    # before a loop may name the base only when this is before the loop.
    base_decl: int | None = None
    # A store that reads the element first (`x[i] += ...`, `x[i]++`): for the cache
    # simulator's model of the loop (analysis/partition.py); the hints see one reference.
    also_read: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        # Derived once, at construction (an indirect reference has no affine offset).
        if self.offset is None and len(self.subscripts) == len(self.strides):
            total = Affine()
            for sub, stride in zip(self.subscripts, self.strides, strict=True):
                total = total.plus(sub.scaled(stride))
            object.__setattr__(self, "offset", total)

    def byte_offset(self) -> Affine:
        """Σ subscript_k · stride_k: the address minus the base, affine in the loop variables."""
        if self.offset is None:
            raise ValueError(f"{self.text}: an indirect reference has no affine offset")
        return self.offset


@dataclass(frozen=True)
class OmpLoop:
    """The OpenMP annotation of a loop (`#pragma omp parallel for schedule(static, 4)`),
    read from the source text; recorded for the passes, not yet acted on."""

    directive: str               # "parallel for", "for", "simd", "parallel for simd", ...
    line: int
    schedule: str | None = None  # static, dynamic, guided, runtime, auto
    chunk: str | None = None     # C text of the chunk size
    num_threads: str | None = None
    collapse: int = 1            # 0: not a number the text shows (a macro)
    clauses: tuple[str, ...] = ()  # every clause as written, for the report
    # The chunk and num_threads texts may be evaluated a second time (their macros
    # expanded: no call, assignment, increment, __COUNTER__...).
    repeatable: bool = True


@dataclass(frozen=True)
class Refusal:
    """Why the front end could not build a Loop for a for-statement."""

    why: str


@dataclass(frozen=True)
class Loop:
    """A canonical counted loop: for (var = lower; var OP upper; var += step)."""

    var: str
    lower: str | None         # C text of the initial value (None: analysis failed)
    upper: str | None         # C text of the bound
    cond_op: str | None       # <, <=, >, >=, !=
    step: int | None          # constant step (negative for countdown)
    line: int
    depth: int
    start: int                # byte offset of `for`
    end: int                  # byte offset just past the statement (including a final ';')
    body_start: int           # byte offset of the body's first byte
    body_end: int             # byte offset just past the body
    body_compound: bool
    trip: int | None = None   # constant trip count when known
    lower_sym: Sym | None = None
    upper_sym: Sym | None = None
    bounds_invariant: bool = False  # bounds evaluable at nest entry and loop-invariant
    bound_runtime: bool = False       # `upper` may be evaluated again in the body (plain vars)
    lower_aff: Affine | None = None   # lower bound as affine in the enclosing loop variables
    upper_aff: Affine | None = None   # bound of the comparison, likewise
    body_exits: bool = False  # body contains break/goto/return/continue or a call to longjmp
    conditional: bool = False  # not run on every iteration of the enclosing loop
    body_calls: bool = False   # the body calls a function that might store to memory
    int_stores: bool = False   # the body stores something other than floating point
                               # through memory (it might change an index array)
    float_math: bool = False   # the body adds, subtracts, multiplies or divides in
                               # floating point
    # The bound is integer arithmetic on invariant variables and members of them that the
    # nest never assigns (`g->n`): the same value wherever in the nest it is evaluated,
    # unless a call changes a member.
    bound_fixed: bool = False
    # No iteration of the body can change the bound's value (bound_runtime, and no call
    # or store through memory in the body may change a member it reads: effects.py), so
    # the iterations left, counted at one iteration, stay right for the next ones.
    bound_kept: bool = False
    # The loop runs one row of a compressed sparse row matrix, k from R[i + c] to
    # R[i + c + 1] (parse.row_range): (R, the row loop's variable i, the upper index).
    csr: tuple[str, str, Affine] | None = None
    # A pointer walk, `for (p = a; p < e; p++)`: the variable stands for (uintptr_t)p, an
    # address, and the step is in bytes.  Each run may start anywhere (`p = *rp`).
    walk: bool = False
    ops: int = 0              # operators in the body outside inner loops (Eq. (1)'s s)
    # For loop splitting (rewrite/emit_stream.strip): the increment as written, and why
    # the body cannot run in strips of the loop by what the front end sees
    # (frontend/loops._no_split), None when it can.
    incr: str | None = None
    no_split: str | None = "not analysed"
    omp: OmpLoop | None = None  # the loop's OpenMP annotation, if any
    children: tuple[Loop, ...] = ()
    refs: tuple[ArrayRef, ...] = ()     # directly in this loop's body
    problems: tuple[str, ...] = ()      # why parts were not analysed


@dataclass(frozen=True)
class LoopNest:
    """An outermost analysable loop and everything inside it."""

    function: str
    root: Loop | None            # None: a loop the front end could not analyse at all
    file: str
    skipped: str | None = None   # why the whole nest is left unchanged
    # Why no text at all may be added in or around the nest (a jump into it, a _Pragma,
    # digraphs, a C99 inline definition): the part of `skipped` every pass respects.
    uneditable: str | None = None
    unanalysed_line: int = 0     # the line of a loop with no root
    # Why the nest's text cannot be copied into an unhinted version (a `static` local
    # would become two objects, an `asm` label two symbols...); None: it can.
    uncopyable: str | None = None
    # The `static` functions only this nest calls, which the C compiler inlines: (name,
    # line of its definition, the offset where `__attribute__((__always_inline__))` goes
    # so that it still inlines them when the unhinted copy calls them too).
    inline_callees: tuple[tuple[str, int, int], ...] = ()
    # Under -fopenmp, the line of the OpenMP directive (parallel, for, single, task...)
    # whose statement holds the nest (its own annotation included), 0 when none: the nest
    # runs on a team of threads, or on whichever one the directive picks.
    omp_region: int = 0

    @property
    def line(self) -> int:
        return self.root.line if self.root is not None else self.unanalysed_line

    def loops(self) -> list[Loop]:
        if self.root is None:
            return []
        out, stack = [], [self.root]
        while stack:
            lp = stack.pop()
            out.append(lp)
            stack.extend(reversed(lp.children))
        return out
