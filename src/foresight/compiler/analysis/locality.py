"""Reuse, localized iteration space, locality and prefetch predicates (paper Section 3.1, App. A).

Facts only: nothing here changes code.  Index functions are taken in bytes
(subscripts times strides), so H·i is the byte offset's coefficient per loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from foresight.compiler.ir import Affine, ArrayRef, Loop, LoopNest, sym_add, sym_str, sym_value
from foresight.compiler.options import CompileOptions


@dataclass
class RefFacts:
    ref: ArrayRef
    loops: list[Loop]                         # enclosing loops, outermost first
    reuse: dict[str, str] = field(default_factory=dict)     # var -> temporal|spatial|none|?
    locality: dict[str, str] = field(default_factory=dict)  # reuse ∩ localized space
    predicate: str = "True"
    leader: ArrayRef | None = None            # the group's leading reference (None: itself)
    trailing: bool = True                     # last of its group to touch the data
    group: list[str] = field(default_factory=list)

    @property
    def leading(self) -> bool:
        return self.leader is None


@dataclass
class NestFacts:
    nest: LoopNest
    refs: list[RefFacts]
    localized: dict[str, bool]                # var -> inside the localized iteration space
    volume: dict[str, int | None]             # var -> bytes touched by one iteration (None: ?)
    # id(loop) -> bytes one iteration touches through references reused across the loop
    # (the data that must stay between two iterations; None: ?).  By the loop, not its
    # variable: two sibling loops may have the same one.
    reused: dict[int, int | None] = field(default_factory=dict)


def enclosing(nest: LoopNest) -> list[tuple[ArrayRef, list[Loop]]]:
    out: list[tuple[ArrayRef, list[Loop]]] = []

    def walk(lp: Loop, path: list[Loop]) -> None:
        path = [*path, lp]
        out.extend((r, path) for r in lp.refs)
        for ch in lp.children:
            walk(ch, path)

    walk(nest.root, [])
    return out


def _reuse(coeff: int | None, page: int) -> str:
    if coeff is None:
        return "?"          # symbolic: decided at run time by the page-boundary test
    if coeff == 0:
        return "temporal"   # ker H
    if abs(coeff) < page:
        return "spatial"    # ker H_S: the address moves by less than a page
    return "none"


def _pages(ref: ArrayRef, inner: list[Loop], page: int) -> int | None:
    """Pages a reference touches over all iterations of the loops `inner` (None: unknown)."""
    off = ref.byte_offset()
    spatial_bytes, pages = 1, 1
    for lp in inner:
        if lp.var in ref.base_loops:   # a new row pointer per iteration: other pages
            if lp.trip is None:
                return None
            pages *= lp.trip
            continue
        c = sym_value(off.coeff(lp.var))
        if c is None:
            return None
        if c == 0:
            continue
        if lp.trip is None:
            return None
        if abs(c) >= page:
            pages *= lp.trip
        else:
            spatial_bytes = max(spatial_bytes, abs(c) * lp.trip)
    return pages * max(1, -(-spatial_bytes // page))


def analyse(nest: LoopNest, opts: CompileOptions) -> NestFacts:
    page = opts.page_size
    memory = opts.memory_bytes
    pairs = [(r, loops) for r, loops in enclosing(nest) if r.indirect is None]
    facts = [RefFacts(r, loops) for r, loops in pairs]
    for f in facts:
        off = f.ref.byte_offset()
        for lp in f.loops:
            # Per iteration, not per unit of the variable: a column walk stepping
            # j += 1024 over doubles moves 8 KiB an iteration and has no spatial reuse.
            c = sym_value(off.coeff(lp.var))
            f.reuse[lp.var] = _reuse(None if c is None else c * (lp.step or 1), page)
            if lp.var in f.ref.base_loops:
                # The row pointer A[i] read anew: no relation between the rows is known.
                f.reuse[lp.var] = "none"
        for at, lp in enumerate(f.loops):
            if lp.csr is not None and off.coeff(lp.var) and lp.csr[1] in f.reuse:
                # k from R[i] to R[i + 1]: each row its own stretch, nothing reused across i.
                f.reuse[lp.csr[1]] = "none"
            if lp.walk and off.coeff(lp.var):
                # A pointer walk may start anywhere on each run (p = *rp): no reuse known
                # across the loops around it.
                for outer in f.loops[:at]:
                    f.reuse[outer.var] = "none"
    for r, loops in enclosing(nest):
        if r.indirect is not None:
            rf = RefFacts(r, loops)
            rf.reuse = {lp.var: "none" for lp in loops}   # Section 3.2.2.3: no locality
            facts.append(rf)
    _group(facts, page, opts.block_size)

    # Section 3.1.3: a loop is localized when one of its iterations touches less than memory.
    localized: dict[str, bool] = {}
    volume: dict[str, int | None] = {}
    reused: dict[int, int | None] = {}
    for lp in nest.loops():
        total: int | None = 0
        again: int | None = 0
        for f in facts:
            if lp not in f.loops or f.ref.indirect is not None:
                continue
            inner = f.loops[f.loops.index(lp) + 1:]
            p = 1 if not f.leading else _pages(f.ref, inner, page)
            total = None if total is None or p is None else total + p
            if f.reuse[lp.var] in ("temporal", "spatial"):
                again = None if again is None or p is None else again + p
        volume[lp.var] = None if total is None else total * page
        reused[id(lp)] = None if again is None else again * page
        localized[lp.var] = total is not None and total * page < memory
    # Localized space is a suffix of the nest: an outer loop is localized only if inner ones are.
    for f in facts:
        inside = True
        for lp in reversed(f.loops):
            inside = inside and localized[lp.var]
            kind = f.reuse[lp.var]
            f.locality[lp.var] = kind if inside and kind in ("temporal", "spatial") else (
                "?" if kind == "?" else "none")
        f.predicate = _predicate(f, page)
    return NestFacts(nest, facts, localized, volume, reused)


def _group(facts: list[RefFacts], page: int, block: int) -> None:
    """Group reuse between uniformly generated references (Appendix A.3, half-page rule).

    Each group gets one leading reference (first to touch new data: prefetched) and one
    trailing reference (last to touch it: released behind).  A reference in an offset
    loop (`u[k + o][j]` in `for (o = lo; o <= hi; o++)` inside the loop over k, see
    _offset_free) joins the group of the same array's references with constant offsets
    (`u[k + 1][j]`): its offsets are taken to be a stencil's few, which the group's
    leading stream covers, so it neither leads nor trails (hinting it along its loop of
    a few iterations cost NAS SP's right-hand side 4.7 times its time in memory)."""
    # Shallower references first: a group starts from a reference without offset loops.
    todo = sorted((f for f in facts if f.ref.indirect is None), key=lambda f: len(f.loops))
    while todo:
        m0 = todo.pop(0)
        members = [(m0, (0,) * (len(m0.loops) + 1), False)]
        for f in list(todo):
            rel = _relative(m0, f, page, block)
            if rel is not None:
                members.append((f, *rel))
                todo.remove(f)
        if len(members) == 1:
            continue
        plain = [(f, pos) for f, pos, offset in members if not offset]
        lead = max(plain, key=lambda m: m[1])[0]
        trail = min(plain, key=lambda m: m[1])[0]
        names = [m.ref.text for m, _, _ in members]
        for f, _, _ in members:
            f.leader = None if f is lead else lead.ref
            f.trailing = f is trail
            f.group = [n for n in names if n != f.ref.text]


def _offset_free(a: RefFacts, b: RefFacts, block: int) -> tuple[Affine, ...] | None:
    """b's subscripts without the terms of its offset loops, when b lies in loops inside
    all of a's and each of those inner loops moves b only as an offset of one of a's
    loops x: its variable has, in every subscript of b, the coefficients x has in a's.
    Where b also moves with x the offset is added to it (`u[k + o]`, `x[i + o]`, `a[(i +
    o) * m + j]`: the offset's terms dropped); where b does not, the offset stands in for
    x (`u[k][j][i][n]` beside `u[k][j][i][m]`, n sweeping the record m indexes: n's terms
    become x's, when both loops have known trips sweeping less than a block; such a
    member neither leads nor trails either: its address names a variable of a loop
    inside the group's); None otherwise.  Not an offset loop:
    one whose bounds are affine in the loops around it (`o < n - i` sweeps the rest of
    the array), or whose known trip count moves b by a block or more (a loop worth
    pipelining itself).  Bounds set inside the nest (`klo = lo_off(k)`, NAS SP) are
    unknown here and taken for a stencil's: a long sweep so bounded loses its hints."""
    n = len(a.loops)
    if len(b.loops) <= n or b.loops[:n] != a.loops:
        return None
    subs = b.ref.subscripts
    subs_a = a.ref.subscripts
    if len(subs) != len(subs_a):
        return None
    off = b.ref.byte_offset()
    stand_in: dict[str, str] = {}   # offset variable -> the loop of a's it stands in for
    for e in b.loops[n:]:
        if e.var in b.ref.base_loops or not any(s.coeff(e.var) for s in subs):
            return None
        if any(aff is not None and aff.coeffs for aff in (e.lower_aff, e.upper_aff)):
            return None
        c = sym_value(off.coeff(e.var))
        if e.trip is not None and (c is None or abs(c) * e.trip >= block):
            return None
        x = next((x for x in a.loops if all(s.coeff(e.var) == sa.coeff(x.var)
                                            for s, sa in zip(subs, subs_a, strict=True))),
                 None)
        if x is None:
            return None
        if all(s.coeff(x.var) == sa.coeff(x.var) for s, sa in zip(subs, subs_a, strict=True)):
            continue   # an offset added to x's terms
        # Standing in for x: both sweep one small record (known trips, under a block),
        # so b stays within it of a (not `x[e]` beside `x[i]`, i sweeping the array).
        cx = sym_value(a.ref.byte_offset().coeff(x.var))
        if (any(s.coeff(x.var) for s in subs) or x.var in stand_in.values()
                or e.trip is None or x.trip is None or cx is None
                or abs(cx) * x.trip >= block):
            return None
        stand_in[e.var] = x.var
    inner = {e.var for e in b.loops[n:]}
    return tuple(Affine({stand_in.get(v, v): c for v, c in s.coeffs.items()
                         if v not in inner or v in stand_in}, s.const)
                 for s in subs)


def _relative(a: RefFacts, b: RefFacts, page: int, block: int
              ) -> tuple[tuple[int, ...], bool] | None:
    """How far ahead of `a` reference `b` runs along the traversal, and whether b is in
    offset loops (_offset_free: its offsets there taken as 0), or None when the two are
    not uniformly generated references with group reuse (Appendix A.3)."""
    ra, rb = a.ref, b.ref
    if (ra.base != rb.base or len(ra.subscripts) != len(rb.subscripts)
            or not ra.subscripts or ra.strides != rb.strides):
        return None
    subs_b = rb.subscripts if a.loops == b.loops else _offset_free(a, b, block)
    if subs_b is None:
        return None
    pos = _position(a, ra.subscripts, subs_b, page)
    return None if pos is None else (pos, subs_b is not rb.subscripts)


def _position(a: RefFacts, subs_a: tuple[Affine, ...], subs_b: tuple[Affine, ...],
              page: int) -> tuple[int, ...] | None:
    """_relative's position of subscripts `subs_b` against `subs_a` in a's loops."""
    if any(sa.coeffs != sb.coeffs for sa, sb in zip(subs_a, subs_b, strict=True)):
        return None  # not uniformly generated
    delta = [sym_add(sb.const, sa.const, -1) for sa, sb in zip(subs_a, subs_b, strict=True)]
    loops = a.loops
    if all(not d for d in delta):
        return (0,) * len(loops) + (-1,)   # the same reference again: the first one leads
    rows = [[s.coeff(lp.var) for lp in loops] for s in subs_a]
    # Temporal group reuse: H·r = c_b − c_a has an integer solution (Eq. (2)).
    r = _solve(rows, delta)
    if r is not None:
        return _lex(r, loops)
    # Spatial group reuse: H_S·r = c_S,b − c_S,a and the last rows within half a page.
    last = sym_value(delta[-1])
    elem = sym_value(a.ref.strides[-1])
    if last is None or elem is None or abs(last) * elem >= page // 2:
        return None
    r = _solve(rows[:-1], delta[:-1]) if len(rows) > 1 else [0] * len(loops)
    if r is None:
        return None
    if any(r):
        return _lex(r, loops)
    # Same row: b is ahead when the innermost loop moving the last subscript goes its way.
    for lp, c in zip(reversed(loops), reversed(rows[-1]), strict=True):
        cv = sym_value(c)
        if cv:
            return (0,) * len(loops) + (last * cv * (lp.step or 1),)
    if all(not c for c in rows[-1]):
        # No loop moves the last subscript (a column walk such as u[k][j][0] and u[k][j][1]):
        # both touch the same half page on every iteration; the higher address leads.
        return (0,) * len(loops) + (last,)
    return None


def _solve(rows: list[list[dict]], delta: list[dict]) -> list[int] | None:
    """A small integer r with rows·r = delta, by search over |r_k| <= 4 (None: none found).

    Each symbolic equation is one integer equation per monomial (Σ_k r_k·row[k][m] =
    delta[m]), so the search tests integer dot products; the first r in the search's
    order is returned."""
    ncols = len(rows[0]) if rows else 0
    live = [k for k in range(ncols) if any(row[k] for row in rows)]
    if len(live) > 5:
        return None
    eqs = []
    for row, d in zip(rows, delta, strict=True):
        if any(v == 0 for v in d.values()):
            return None     # a sum of nonzero terms is never kept as an explicit 0
        monomials = set(d).union(*(row[k] for k in live))
        eqs += [(tuple(row[k].get(m, 0) for k in live), d.get(m, 0)) for m in monomials]
    combo = _first_solution(eqs, len(live))
    if combo is None:
        return None
    r = [0] * ncols
    for k, v in zip(live, combo, strict=True):
        r[k] = v
    return r


def _first_solution(eqs: list[tuple[tuple[int, ...], int]], n: int) -> list[int] | None:
    """The first x in itertools.product(range(-4, 5), repeat=n) order with cs·x = t for
    every (cs, t) of `eqs`, or None: a depth-first search in that order that drops a
    prefix once the terms left (each at most 4·|c|) cannot reach an equation's target."""
    left = [[4 * sum(abs(c) for c in cs[k:]) for cs, _ in eqs] for k in range(n + 1)]
    x: list[int] = []

    def extend(k: int, sums: list[int]) -> bool:
        if k == n:
            return all(s == t for s, (_, t) in zip(sums, eqs, strict=True))
        for v in range(-4, 5):
            nxt = [s + cs[k] * v for s, (cs, _) in zip(sums, eqs, strict=True)]
            if all(abs(t - s) <= room for s, (_, t), room in zip(nxt, eqs, left[k + 1],
                                                                  strict=True)):
                x.append(v)
                if extend(k + 1, nxt):
                    return True
                x.pop()
        return False

    return x if extend(0, [0] * len(eqs)) else None


def _lex(r: list[int], loops: list[Loop]) -> tuple[int, ...]:
    """Iterations by which b runs ahead of a, in loop order: compares lexicographically."""
    signs = [1 if (lp.step or 1) > 0 else -1 for lp in loops]
    return tuple(v * sg for v, sg in zip(r, signs, strict=True)) + (0,)


def _predicate(f: RefFacts, page: int) -> str:
    """Section 3.1.4: the conjunction over the enclosing loops of each loop's predicate."""
    if not f.leading:
        return "False"
    if f.ref.indirect is not None:
        return "True"   # Section 3.2.2.3: indirect references are assumed to have no locality
    terms = []
    off = f.ref.byte_offset()
    for lp in f.loops:
        kind = f.locality[lp.var]
        if kind == "temporal":
            terms.append(f"{lp.var} == first")
        elif kind == "spatial":
            c = abs(sym_value(off.coeff(lp.var)) or 1)
            terms.append(f"{lp.var} mod {max(1, page // c)} == 0")
        elif kind == "?":
            terms.append(f"new page of {f.ref.text} (stride {sym_str(off.coeff(lp.var))}"
                         " bytes, tested at run time)")
    return " && ".join(terms) if terms else "True"
