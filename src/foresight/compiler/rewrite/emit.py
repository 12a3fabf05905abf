"""Turn a NestPlan into single-line C insertions (rewrite/splice.py) into the original
text, so line numbers of the user's code never move.  Addresses are computed in uintptr_t
(wrapping, never out-of-bounds pointer arithmetic); the only loads added are of
invariant variables and, for indirect references, of index elements the loop
itself reads (clamped to the loop's last iteration) and, for a[c[b[i]]], of the
entry of the table c that such an element selects (skipped unless it is in c), and
of a row pointer A[i] (or p->q) in an iteration that reads it itself.

This is the driver: it walks the plan's pipelining loops and hands each hint to the
emitter of its kind (schedule/distance.py's `kind`): emit_stream.py (strided references
and pointer walks: the runtime steps them, foresight_streams_step, one countdown per
pipelining loop), emit_indirect.py and emit_rows.py (their look-ahead loads are typed,
so they are written out here).  The set-up at nest entry is one foresight_nest_enter
call on a static table of the nest's streams.  All C goes through rewrite/cexpr.py,
every name through the nest's table (rewrite/names.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from foresight.compiler.ir import Loop, LoopNest, Sym, sym_value
from foresight.compiler.options import CompileOptions, decode_source, line_at
from foresight.compiler.rewrite import bounds, emit_indirect, emit_rows, emit_stream
from foresight.compiler.rewrite import cexpr as C
from foresight.compiler.rewrite.cexpr import U
from foresight.compiler.rewrite.names import LOCALS
from foresight.compiler.rewrite.nest import NestCode
from foresight.compiler.rewrite.splice import Insertion, line_name
from foresight.compiler.schedule import distance
from foresight.compiler.schedule.plan import UNMOVED, NestPlan

if TYPE_CHECKING:
    from foresight.compiler.passes.api import Unit

# The emitters of the hints written out in the loop body, by schedule/distance.py's kind
# (streams are stepped together, per pipelining loop: emit_stream.step).
EMITTERS = {"indirect": emit_indirect, "rows": emit_rows}


def no_copy(nest: LoopNest, opts: CompileOptions) -> str | None:
    """Why nest `nest` runs in one version, or None: a hinted nest runs as two versions,
    chosen at entry, the hinted one and a copy of the user's text for the runs the entry
    leaves unhinted (a program that fits in its memory, a run spanning less than
    CompileOptions.run_floor), which then run the code the C compiler makes of the
    original.  Not where the text cannot be compiled twice (frontend/loops._uncopyable),
    nor under the paper preset, whose hint code tests `on` in the loop as the paper's
    did."""
    if opts.preset == "paper":
        return "the paper preset tests in the loop"
    return nest.uncopyable


def forced_inline(nest: LoopNest, plan: NestPlan, opts: CompileOptions
                  ) -> tuple[tuple[str, int, int], ...]:
    """The functions of nest.inline_callees to force inline: those of a nest that runs as
    two versions (the copy calls them a second time), where cc inlines functions called
    once (CompileOptions.inline_once)."""
    if not (opts.inline_once and plan.hints and no_copy(nest, opts) is None):
        return ()
    return nest.inline_callees


def inline_insertions(nest: LoopNest, plan: NestPlan, opts: CompileOptions
                      ) -> list[Insertion]:
    """`__attribute__((__always_inline__))` after the `static` of each forced_inline
    function (after `static`: gcc's -Wold-style-declaration wants it first)."""
    return [Insertion(at, 1, 0, " __attribute__((__always_inline__)) __inline__",
                      optional=True) for _, _, at in forced_inline(nest, plan, opts)]


def _next_row(pipe: Loop, streams: list) -> str | None:
    """The row loop's variable when `pipe` runs one row of a CSR matrix (Loop.csr: k from
    R[i + c] to R[i + c + 1], so row i + 1 starts where row i ended), runs to its bound
    (no break or goto out of it), and its streams' addresses move with k alone (val[k],
    col[k]): then a run at row i + 1 continues the run at row i.  None otherwise."""
    if pipe.csr is None or pipe.body_exits or pipe.step != 1:
        return None
    for h in streams:
        off = h.ref.byte_offset()
        if h.ref.base_loops or any(c for v, c in off.coeffs.items() if v != pipe.var):
            return None
    return pipe.csr[1]


class NestEmitter:
    def __init__(self, plan: NestPlan, nest_id: int, opts: CompileOptions, unit: Unit):
        self.plan, self.n, self.opts, self.unit = plan, nest_id, opts, unit
        self.copy = no_copy(plan.facts.nest, opts) is None

    def insertions(self) -> list[Insertion]:
        plan, opts = self.plan, self.opts
        nest = NestCode(plan, self.n, opts)
        names, entry = nest.names, nest.entry
        on = names.active
        active = C.call("foresight_active")
        if plan.footprint is not None:   # a run spanning under the floor goes unhinted
            active = C.all_of(C.cmp(_span(plan.footprint), ">=", C.literal(opts.run_floor)),
                              active)
        entry.append(C.decl("int", (on, active)))
        if opts.preset != "paper" and any(h.rows_for is not None for h in plan.hints):
            entry.append(C.decl(C.const(U), (names.lookahead, C.ternary(
                on, C.cast_atom(U, C.call("foresight_lookahead_bytes")), "0"))))
        # The pipelining loop chosen at nest entry (plan.Version): per reference with a
        # move only the entry can decide, how many of its moves hold in a row.
        nest.choose_versions()
        # The nest's streams, one array in pipelining-loop order, set up at nest entry by
        # foresight_nest_enter from a static table (per stream its loop, lead and
        # constant flags; per loop its indirect references and the paper's fixed
        # distance) and four run-time values per stream (step, region, low, run-time
        # flags).  The library also computes each loop's distances, `ds` for its streams
        # and `di` for its indirect references, by schedule/distance.py's rule (with
        # one distance for both, a gather's page per iteration made it ~1,000
        # iterations, a few KiB of the streams: NAS CG's matrix streams arrived late).
        specs: list[str] = []      # struct foresight_nest_stream initialisers
        pipes: list[str] = []      # struct foresight_nest_pipe initialisers
        values: list[str] = []     # four run-time values per stream
        # By id of a pipelining loop: the statements that open its strip (split loops,
        # emit_stream.strip) or None, and its hints' code per iteration.
        body: dict[int, tuple[str | None, list[str]]] = {}
        for p, pipe in enumerate(plan.pipes()):
            hints = [h for h in plan.hints if h.pipe is pipe]
            rules = [distance.of(plan, h, opts) for h in hints]
            # The pipe's streams: consecutive in the nest's array, one countdown
            # (emit_stream.step).
            streams = [h for h, r in zip(hints, rules, strict=True) if r.kind == "stream"]
            first = len(specs)
            if streams:
                pc = names.countdown(pipe)
                entry.append(C.decl(U, (pc, "0")))
                row = _next_row(pipe, streams)
                gate = plan.gates.get(id(pipe))
                if gate is not None:
                    nest.reset(pipe, self._gated_reset(nest, pipe, gate, streams, pc))
                elif row is None:
                    nest.reset(pipe, C.set_to(pc, "0"))
                else:
                    # A CSR row that starts where the previous one ended (the row loop's
                    # next row) continues its streams' countdown: one step per granule,
                    # not one library call per row (short rows: a call per 8 nonzeros).
                    prev = nest.names.fresh("row")[0]
                    entry.append(C.decl(U, (prev, "0")))
                    nest.reset(pipe, C.if_(C.cmp(C.cast(U, row), "!=",
                                                 C.plus(prev, "1")), C.set_to(pc, "0"))
                               + " " + C.set_to(prev, C.cast(U, row)))
            for h, r in zip(hints, rules, strict=True):
                if r.kind == "stream":
                    spec, vals = emit_stream.setup(nest, h, p, r.lead,
                                                   plan.gates.get(id(pipe)))
                    specs.append(spec)
                    values += vals
                else:
                    EMITTERS[r.kind].declare(nest, h)
            indirect = sum(r.kind == "indirect" for r in rules)
            pipes.append(C.init_list(str(indirect), str(distance.fixed(plan, pipe, opts))))
            code = []
            for h, r in zip(hints, rules, strict=True):
                if r.kind != "stream":
                    c = EMITTERS[r.kind].code(nest, h, nest.distance(p, r.kind))
                    if h.version is not None:   # only in the version that chose its loop
                        c = C.if_(nest.chosen(h), C.block(c))
                    code.append(c)
            head = None
            if streams and self._split(pipe):
                head = emit_stream.strip(nest, pipe, streams, first,
                                         id(pipe) in plan.gates)
            elif streams:
                code.insert(0, emit_stream.step(nest, pipe, streams, first))
            body[id(pipe)] = (head, code)
        statics = []
        if specs:
            statics.append(C.decl("static const struct foresight_nest_stream",
                                  (C.index(names.stream_table, ""), C.init_list(*specs))))
            entry.append(C.decl("struct foresight_stream", C.index(names.streams, len(specs))))
        statics.append(C.decl("static const struct foresight_nest_pipe",
                              (C.index(names.pipe_table, ""), C.init_list(*pipes))))
        statics.append(C.decl("static const struct foresight_nest", (names.table, C.init_list(
            names.stream_table if specs else "0", names.pipe_table, str(len(specs)),
            str(len(pipes)), str(opts.page_size), str(opts.block_size)))))
        entry.append(C.decl(U, (C.index(names.distances, 2 * len(pipes)), C.init_list("0"))))
        entry += statics
        # The library says at entry whether this run of the nest is hinted (not while
        # the program's memory fits in its limit): `on` is 0 from then on if not.
        if specs:
            entry.append(C.if_(on, C.block(
                C.decl(C.const(U), (C.index(LOCALS.nv, ""), C.init_list(*values))),
                C.set_to(on, C.call("foresight_nest_enter", C.addr_of(names.table),
                                    names.streams, LOCALS.nv, names.distances)))))
        else:
            entry.append(C.if_(on, C.set_to(on, C.call(
                "foresight_nest_enter", C.addr_of(names.table), "0", "0", names.distances))))
        return self._place(nest, body)

    def _gated_reset(self, nest: NestCode, pipe: Loop, gate: tuple[Loop, int],
                     streams: list, pc: str) -> str:
        """The reset of a pipelining loop whose streams step on runs g or more
        iterations of the loop around apart (plan._gate): `gs` says whether one
        stepped in this run of the loop around, `gl` holds its variable there; a run
        that does not step starts from a countdown that never runs out."""
        around, g = gate
        gs, gl, gd = nest.names.fresh("gs", 3)
        nest.reset(around, C.set_to(gs, "0"))
        var = C.cast(U, around.var)
        due, moved, stepped = [C.cmp(gs, "==", "0")], [], [C.set_to(gs, "1")]
        if g == UNMOVED:   # the loop around does not move them: its first run only
            nest.entry.append(C.decl(U, (gs, "0")))
        else:
            assert around.step is not None
            nest.entry.append(C.decl(U, (gs, "0"), (gl, "0")))
            moved = [C.decl(C.const(U), (gd, C.minus(var, gl)))]
            due.append(C.cmp(C.abs_value(gd), ">=", C.literal(g * abs(around.step))))
            stepped.insert(0, C.set_to(gl, var))
        due += [C.negation(o) for o in dict.fromkeys(
            emit_stream.gate_open(nest, h) for h in streams) if o is not None]
        return C.block(*moved,
                       C.set_to(pc, C.ternary(C.paren(C.any_of(*due)), "0", "UINTPTR_MAX")),
                       C.if_(C.cmp(pc, "==", "0"), C.block(*stepped)))

    def _split(self, pipe: Loop) -> bool:
        """Whether the streams of `pipe` step once per strip (emit_stream.strip): as the
        plan says (NestPlan.splits; the front end has checked that a braced body's
        braces are the file's own)."""
        assert (self.plan.splits.get(id(pipe), "") is None) <= self.copy
        return self.plan.splits.get(id(pipe), "") is None

    def _place(self, nest: NestCode, body: dict[int, tuple[str | None, list[str]]]
               ) -> list[Insertion]:
        """Where the code goes: the nest's entry statements in a block around the nest,
        each loop's resets in a block around that loop, and each pipelining loop's code
        at the top of its body (in a block around an unbraced body); a split loop's
        strip opens there and closes at the end of the body."""
        root = self.plan.facts.nest.root
        assert root is not None
        on = nest.names.active
        hinted = C.if_head(on) + "{ " if self.copy else ""
        copy = self._unhinted_copy(root) if self.copy else ""
        out = [Insertion(root.start, 1, 3 * root.depth,
                         "{ " + " ".join(nest.entry) + " " + hinted),
               Insertion(root.end, 0, -3 * root.depth, copy + " }")]
        for lid, lp in nest.reset_at.items():
            out.append(Insertion(lp.start, 1, 3 * lp.depth + 1,
                                 "{ " + " ".join(nest.resets[lid]) + " "))
            out.append(Insertion(lp.end, 0, -(3 * lp.depth + 1), " }"))
        for pipe in self.plan.pipes():
            head, stmts = body[id(pipe)]
            code = C.block(*stmts)
            if not self.copy:   # one version: its unhinted runs skip the hints
                code = C.if_(on, code)
            level = 3 * pipe.depth + 2
            if head is not None:   # the strip's inner loop closes at the end of the body
                code = head + (" " + code if stmts else "")
            if pipe.body_compound:
                out.append(Insertion(pipe.body_start + 1, 1, level, " " + code))
                if head is not None:
                    out.append(Insertion(pipe.body_end - 1, 0, -level, " } "))
            else:
                out.append(Insertion(pipe.body_start, 1, level, "{ " + code + " "))
                out.append(Insertion(pipe.body_end, 0, -level,
                                     " } }" if head is not None else " }"))
        return out

    def _unhinted_copy(self, root: Loop) -> str:
        """` } else { COPY }` (the hinted nest in braces: an `else` after a body that is
        an if statement would be its else): the nest's own text, between #line
        directives that give it its lines in the user's file and give the text after it
        its line again (the only insertion that spans lines: rewrite/splice.py), each
        line after a #line indented to the column it had."""
        data, name = self.unit.data, line_name(self.unit.path)

        def at(offset: int) -> str:
            line_start = data.rfind(b"\n", 0, offset) + 1
            indent = "".join(ch if ch == "\t" else " "
                             for ch in decode_source(data[line_start:offset]))
            line = line_at(data, offset)
            return f"\n#line {line} {name}\n{indent}"

        copy = decode_source(data[root.start:root.end])
        return f" }} else {{{at(root.start)}{copy}{at(root.end)}}}"


def _span(footprint: tuple[int, list[tuple[Loop, list[Sym]]]]) -> str:
    """C for the bytes a run of the nest spans (plan._small_runs): its fixed bytes plus,
    per loop, the iterations after the first times the sum of its strides."""
    fixed, terms = footprint
    parts = [C.literal(fixed)]
    for v, strides in terms:
        assert v.step is not None
        known = sum(C.wrapped_abs(sym_value(s) * v.step) for s in strides
                    if sym_value(s) is not None)
        per = [C.abs_sym(s, v.step) for s in strides if sym_value(s) is None]
        per += [C.literal(known)] if known else []
        if per:
            parts.append(C.times(C.paren(bounds.iterations(v)), C.wsum(*per)))
    return C.wsum(*parts)
