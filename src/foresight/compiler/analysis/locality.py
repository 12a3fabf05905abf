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
    memory = opts.memory_bytes or 64 << 20
    pairs = [(r, loops) for r, loops in enclosing(nest) if r.indirect is None]
    facts = [RefFacts(r, loops) for r, loops in pairs]
    for f in facts:
        off = f.ref.byte_offset()
        for lp in f.loops:
            f.reuse[lp.var] = _reuse(sym_value(off.coeff(lp.var)), page)
    for r, loops in enclosing(nest):
        if r.indirect is not None:
            rf = RefFacts(r, loops)
            rf.reuse = {lp.var: "none" for lp in loops}   # Section 3.2.2.3: no locality
            facts.append(rf)
    _group(facts, page)

    # Section 3.1.3: a loop is localized when one of its iterations touches less than memory.
    localized: dict[str, bool] = {}
    volume: dict[str, int | None] = {}
    for lp in nest.loops():
        total: int | None = 0
        for f in facts:
            if lp not in f.loops or f.ref.indirect is not None:
                continue
            inner = f.loops[f.loops.index(lp) + 1:]
            p = 1 if not f.leading else _pages(f.ref, inner, page)
            total = None if total is None or p is None else total + p
        volume[lp.var] = None if total is None else total * page
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
    return NestFacts(nest, facts, localized, volume)


def _group(facts: list[RefFacts], page: int) -> None:
    """Group reuse between uniformly generated references (Appendix A.3, half-page rule).

    Each group gets one leading reference (first to touch new data: prefetched) and one
    trailing reference (last to touch it: released behind)."""
    todo = [f for f in facts if f.ref.indirect is None]
    while todo:
        m0 = todo.pop(0)
        members = [(m0, 0)]
        for f in list(todo):
            pos = _relative(m0, f, page)
            if pos is not None:
                members.append((f, pos))
                todo.remove(f)
        if len(members) == 1:
            continue
        lead = max(members, key=lambda m: m[1])[0]
        trail = min(members, key=lambda m: m[1])[0]
        names = [m.ref.text for m, _ in members]
        for f, _ in members:
            f.leader = None if f is lead else lead.ref
            f.trailing = f is trail
            f.group = [n for n in names if n != f.ref.text]


def _relative(a: RefFacts, b: RefFacts, page: int) -> int | None:
    """How far ahead of `a` reference `b` runs along the direction of travel, or None when
    the two are not uniformly generated references with group reuse."""
    if a.ref.base != b.ref.base or a.loops != b.loops:
        return None
    oa, ob = a.ref.byte_offset(), b.ref.byte_offset()
    if oa.coeffs != ob.coeffs:
        return None
    dsym = sym_add(ob.const, oa.const, -1)
    delta = sym_value(dsym)
    if delta == 0:
        return None
    if delta is not None:
        along = _group_loop(oa, delta, a.loops, page)
        if along is None:
            return None
        lp, c = along
        return delta if c * (lp.step or 1) > 0 else -delta
    along = _group_loop_symbolic(oa, dsym, a.loops)
    if along is None:
        return None
    lp, k = along
    return k if (lp.step or 1) > 0 else -k


def _group_loop(off: Affine, delta: int, loops: list[Loop], page: int):
    """The loop along which two references separated by `delta` bytes reuse each other."""
    for lp in reversed(loops):
        c = sym_value(off.coeff(lp.var))
        if c is None or c == 0:
            continue
        if delta % c == 0 or abs(delta) < page // 2:
            return lp, c
        return None
    return None


def _group_loop_symbolic(off: Affine, delta: dict, loops: list[Loop]):
    """Symbolic offsets (A[i+1][j] in a variably modified array): delta = k·H column."""
    for lp in reversed(loops):
        c = off.coeff(lp.var)
        if not c:
            continue
        for k in range(-8, 9):
            if k and sym_add(delta, {m: k * v for m, v in c.items()}, -1) == {}:
                return lp, k    # the sign of k orders the references along lp
    return None


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
