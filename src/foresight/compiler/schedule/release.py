"""Which data a hint releases behind its trailing reference (paper Section 3.2.3): data
the nest will not touch again while it could still be in memory; where that depends on
sizes known only at run time, the volume one iteration touches, evaluated at nest entry."""

from __future__ import annotations

from foresight.compiler.analysis.locality import NestFacts, RefFacts
from foresight.compiler.ir import ArrayRef, Loop


def temporal_outside_only(f: RefFacts, pipe: Loop) -> bool:
    """No loop outside `pipe` carries temporal or spatial locality for the reference."""
    idx = f.loops.index(pipe)
    return all(f.locality[lp.var] not in ("temporal", "spatial") for lp in f.loops[:idx])


def kept(f: RefFacts, pipe: Loop, facts: NestFacts, memory: int,
          paper: bool) -> tuple[str | None, Loop | None]:
    """Why the reference's data is not released (None: release it), and the loop whose
    per-iteration volume decides it at nest entry, if any: release only data the nest
    will not touch again while it could still be in memory.

    Data reused across an outer loop (temporal or spatial reuse) is released only when
    one iteration of that loop touches more than the memory the runtime manages,
    evaluated at nest entry (the paper's localized space, with the memory actually
    available instead of the one assumed at compile time): if it fits, releasing would
    page it out and back in on every iteration, while data that does not fit is better
    released than left to push out what does.  The innermost such loop decides (outer
    ones touch more).  `volume` and `memory` (compile time) decide where the volume
    cannot be evaluated at entry, or is known to be less than an eighth of memory, and
    always under the paper preset.

    The volume is that of the references reused across the loop (NestFacts.reused): the
    others' data is released behind them, or left to the kernel's reclaim, so it need not
    stay between iterations (seismo: a channel streamed from a file and a 40 MiB array
    read again for each of 16 channels, 80 MiB an iteration under a 64 MiB cap; with the
    array released each channel read it back from swap).  The paper's preset counts every
    reference, as the paper's localized space does."""
    idx = f.loops.index(pipe)
    across = None
    for lp in f.loops[:idx]:
        if f.reuse[lp.var] in ("temporal", "spatial"):
            across = lp
    if across is None:
        return None, None
    known = facts.volume.get(across.var) if paper else facts.reused.get(id(across))
    if paper and known is not None:
        # The paper's localized space: the memory assumed at compile time decides.
        return (None, None) if known >= memory else (
            f"reused across {across.var} within the localized space", None)
    if known is not None and known * 8 <= memory:
        # As for small indirect targets: an eighth of the memory assumed (itself an
        # underestimate) stays in memory; no test at entry (the paper's Figure 4).
        return f"reused across {across.var}, {known} bytes per iteration", None
    if known is not None and known >= memory:
        return None, across       # released even where the entry cannot evaluate it
    return f"reused across {across.var} while in memory", across


def runtime_volume(facts: NestFacts, lp: Loop
                   ) -> list[tuple[int, list[tuple[dict | None, Loop]]]] | None:
    """The bytes one iteration of `lp` touches, as terms C can evaluate at nest entry: per
    leading direct reference inside it, its element size and the (byte coefficient, loop)
    of each inner loop moving it; rewrite/emit_stream.py turns them into memory touched (a loop
    adds per iteration its stride, at most the footprint so far in pages).  None when an
    inner loop's bounds are not fixed for the whole nest (their trip counts cannot be
    evaluated at entry).  Indirect targets are left out, so the volume errs small and
    the data is kept.  Only references reused across `lp` count, as in kept()."""
    terms = []
    for g in facts.refs:
        if (g.ref.indirect is not None or not g.leading or lp not in g.loops
                or g.reuse[lp.var] not in ("temporal", "spatial")):
            continue
        off = g.ref.byte_offset()
        moves = []
        for v in g.loops[g.loops.index(lp) + 1:]:
            # A loop reading a new row pointer A[i] per iteration moves to another object:
            # a stride None, which the rewrite counts as larger than any footprint.
            c = None if v.var in g.ref.base_loops else off.coeff(v.var)
            if not c and c is not None:
                continue
            if (v.lower_sym is None or v.upper_sym is None or not v.step
                    or v.cond_op not in ("<", "<=", ">", ">=")
                    or (v.step > 0) != (v.cond_op in ("<", "<="))):
                return None
            moves.append((c, v))
        terms.append((g.ref.elem_size, moves))
    return terms or None


def trailing(f: RefFacts, refs: list[RefFacts]) -> ArrayRef:
    """The trailing reference of `f`'s group (f itself when it has none)."""
    for g in refs:
        if g.leader is f.ref and g.trailing:
            return g.ref
    return f.ref
