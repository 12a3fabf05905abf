"""--report: per loop nest, what the compiler found and decided (also as JSON)."""

from __future__ import annotations

import re
from dataclasses import asdict

from foresight.compiler.analysis.locality import NestFacts
from foresight.compiler.ir import LoopNest, sym_str
from foresight.compiler.options import CompileOptions
from foresight.compiler.rewrite.emit import forced_inline, no_copy
from foresight.compiler.schedule import distance
from foresight.compiler.schedule.plan import UNMOVED, NestPlan


def nest_report(nest: LoopNest, facts: NestFacts | None, plan: NestPlan | None,
                opts: CompileOptions) -> dict:
    loops = []
    for lp in nest.loops():
        loops.append({
            "var": lp.var, "line": lp.line, "depth": lp.depth, "lower": lp.lower,
            "bound": f"{lp.cond_op} {lp.upper}" if lp.cond_op else None, "step": lp.step,
            "trip": lp.trip,
            "localized": None if facts is None else facts.localized.get(lp.var),
            "bytes_per_iteration": None if facts is None else facts.volume.get(lp.var),
            "problems": lp.problems,
            **({"omp": asdict(lp.omp)} if lp.omp is not None else {}),
            # A pipelining loop with streams: "split" where they step once per strip of
            # it (loop splitting), else why they count down in every iteration.
            **({"strips": plan.splits[id(lp)] or "split"}
               if plan is not None and id(lp) in plan.splits else {}),
            # A pipelining loop whose streams step on its runs `every` or more
            # iterations of the loop `around` it apart (plan.NestPlan.gates; every None:
            # on its first run in each run of that loop only).
            **({"gated": {"around": plan.gates[id(lp)][0].var,
                          "every": (None if plan.gates[id(lp)][1] == UNMOVED
                                    else plan.gates[id(lp)][1])}}
               if plan is not None and id(lp) in plan.gates else {}),
        })
    out: dict = {"file": nest.file, "function": nest.function, "line": nest.line,
                 "loops": loops, "skipped": nest.skipped}
    if facts is None or plan is None:
        return out
    out["references"] = [{
        "ref": f.ref.text, "line": f.ref.line,
        "kind": "indirect" if f.ref.indirect is not None else "affine",
        "byte_offset": None if f.ref.indirect is not None else str(f.ref.byte_offset()),
        "reuse": f.reuse, "locality": f.locality, "predicate": f.predicate,
        "leading": f.leading, "trailing": f.trailing, "group": f.group,
        # The size of the whole object when the source fixes it (None: unknown): what
        # decides that a small indirect target stays in memory (plan.schedule).
        "object_bytes": f.ref.object_bytes,
    } for f in facts.refs]
    out["hints"] = [{
        "ref": h.ref.text, "pipelining_loop": h.pipe.var,
        "stride_bytes": (None if h.indirect_index is not None
                         else sym_str(h.ref.byte_offset().coeff(h.pipe.var))),
        "release": None if h.release is None else h.release.text,
        "release_if_volume_exceeds_memory": (None if h.release_if_exceeds is None
                                             else h.release_if_exceeds.var),
        # how that volume is known: evaluated at nest entry, or measured as the stream
        # runs (its sweeps' bytes); None without such a condition
        "release_volume": (None if h.release_if_exceeds is None
                           else "entry" if h.volume is not None else "measured"),
        "distance": distance.of(plan, h, opts).describe(),
        "distance_rule": asdict(distance.of(plan, h, opts)),
        "feeds_indirect": h.feeds_indirect,
        # a[b[i]] and a[c[b[i]]]: the index stream b[i] read ahead, and the table c[b[i]]
        # read through (bounds-checked); the loop over rows when the look-ahead runs
        # across the rows of a sparse matrix (up to the last row's end).
        "indirect_index": None if h.indirect_index is None else h.indirect_index.text,
        "indirect_through": None if h.indirect_middle is None else h.indirect_middle.text,
        "sparse_rows_along": None if h.csr_end is None else h.csr_end[2].var,
        "rows_ahead_along": None if h.rows_for is None else h.rows_for.var,
        # The pipelining loop taken at nest entry: this hint runs when exactly `taken` of
        # the moves outward hold (each: its loop touches less than a block in all).
        "version": None if h.version is None else {
            "taken": h.version.taken, "moves": [m.loop.var for m in h.version.moves]},
        "block_bytes": opts.block_size,
    } for h in plan.hints]
    out["decisions"] = plan.decisions
    # A run spanning less than the floor runs unhinted, tested at entry (plan._small_runs).
    out["small_runs_unhinted"] = plan.footprint is not None
    out["run_floor_bytes"] = opts.run_floor
    # Runs left unhinted run a copy of the nest as written (rewrite/emit.no_copy), unless
    # this says why not.
    out["no_unhinted_copy"] = no_copy(nest, opts) if plan.hints else None
    # Called only here and inlined by the C compiler: forced inline at both calls.
    out["forced_inline"] = [{"function": f, "line": line} for f, line, _ in
                            forced_inline(nest, plan, opts)]
    out["prefetch"] = opts.prefetch
    return out


def format_report(entries: list[dict]) -> str:
    """--report's text: the prefetch pass's entries per loop nest (below), another
    pass's as `file:line: [pass] message`, then a summary line per file."""
    lines = []
    for e in entries:
        if e.get("pass", "prefetch") != "prefetch":
            lines.append(f"{e['file']}:{e['line']}: [{e['pass']}] {e['message']}")
            continue
        what = "loop nest in" if e["loops"] else "in"
        lines.append(f"{e['file']}:{e['line']}: {what} {e['function']}()")
        if e.get("skipped"):
            lines.append(f"  left unchanged: {e['skipped']}")
            continue
        for lp in e["loops"]:
            trip = lp["trip"] if lp["trip"] is not None else "symbolic"
            loc = "localized" if lp["localized"] else "not localized"
            lower = "?" if lp["lower"] is None else lp["lower"]
            bound = lp["bound"] or "? (condition not analysed)"
            strips = lp.get("strips")
            split = "" if strips is None else (
                "; its streams step once per strip (loop splitting)" if strips == "split"
                else f"; not split ({strips}): its streams count down every iteration")
            lines.append(f"  loop {lp['var']} (line {lp['line']}): {lower} .. "
                         f"{bound} step {lp['step']}, trip {trip}, {loc}{split}")
            lines.extend(f"    {p}" for p in lp["problems"])
        for r in e.get("references", []):
            reuse = ", ".join(f"{v}:{k}" for v, k in r["reuse"].items())
            lines.append(f"  ref {r['ref']} (line {r['line']}): reuse [{reuse}] "
                         f"predicate {r['predicate']}"
                         + ("" if r["leading"] else " (group, not leading)"))
        for d in e.get("decisions", []):
            lines.append(f"  decision: {d}")
        if e.get("small_runs_unhinted"):
            lines.append(f"  at nest entry: a run spanning less than {e['run_floor_bytes']} "
                         "bytes in all runs unhinted")
        if e.get("hints") and e.get("no_unhinted_copy"):
            lines.append("  unhinted runs run the hinted code with its hints off: "
                         + e["no_unhinted_copy"])
        for f in e.get("forced_inline", []):
            if f.get("dropped"):
                lines.append(f"  {f['function']} (static, line {f['line']}) not forced "
                             "inline: cc refused it (an attribute or option the text does "
                             "not show); compiled without")
                continue
            lines.append(f"  {f['function']} (static, line {f['line']}) forced inline: the "
                         "unhinted copy calls it a second time, and cc inlines a static "
                         "function called once only")
        if e.get("hints") == [] and not e.get("skipped"):
            lines.append("  no hints inserted")
    lines.extend(file_summaries(entries))
    return "\n".join(lines)


def file_summaries(entries: list[dict]) -> list[str]:
    """One line per source file: its loop nests, how many got hints, and how many were
    left alone, counted by reason, so a large project's coverage reads at a glance."""
    files: dict[str, list[dict]] = {}
    for e in entries:
        if e.get("pass", "prefetch") != "prefetch":
            continue
        files.setdefault(e.get("source") or e["file"], []).append(e)
    out = []
    for name, nests in files.items():
        hinted = sum(1 for e in nests if e.get("hints"))
        reasons: dict[str, int] = {}
        for e in nests:
            if not e.get("hints"):
                why = left_alone_reason(e)
                reasons[why] = reasons.get(why, 0) + 1
        alone = sum(reasons.values())
        what = "hinted" if all(e.get("prefetch", True) for e in nests) else \
            "would be hinted (--no-prefetch: none inserted)"
        unchanged = next((e for e in nests if e.get("compiled_unchanged")), None)
        if unchanged is not None:
            why = unchanged.get("unchanged_reason", "the transformed text did not compile")
            out.append(f"{name}: summary: {len(nests)} loop nest"
                       f"{'s' if len(nests) != 1 else ''}, none hinted: {why}, so the file "
                       "was compiled unchanged")
            continue
        line = (f"{name}: summary: {len(nests)} loop nest{'s' if len(nests) != 1 else ''}, "
                f"{hinted} {what}, {alone} left alone")
        if reasons:
            line += " (" + ", ".join(f"{n} {why}" for why, n in
                                     sorted(reasons.items(), key=lambda r: (-r[1], r[0]))) + ")"
        out.append(line)
    return out


_SMALL = ("left to demand paging", "loop-invariant", "stays in memory", "group reuse with")


def left_alone_reason(e: dict) -> str:
    """Why a nest got no hints, in a few words shared by all nests left alone alike."""
    if (e.get("skipped") or "").startswith("first touch of new memory"):
        return "first touch of new memory"
    if e.get("skipped"):
        # The reason's first clause, without the names, lines and asides that differ
        # from loop to loop (`the index i is changed in the body (line 12)`).
        why = re.sub(r" ?\([^()]*\)", "", e["skipped"])
        why = re.sub(r"\b(the index|initialises|steps) \w+", r"\1", why)
        return "not analysed: " + re.split(r": |; ", why, maxsplit=1)[0]
    if not e.get("references"):
        if any(lp["problems"] for lp in e["loops"]):
            return "no reference analysable"
        return "no array references"
    decisions = [d.split(": ", 1)[-1] for d in e.get("decisions", [])]
    if decisions and all(any(s in d for s in _SMALL) for d in decisions):
        return "data too small to need hints"
    if decisions and all(any(s in d for s in (*_SMALL, "--no-indirect")) for d in decisions):
        return "indirect only, and --no-indirect"
    return "no hint could be proved safe"
