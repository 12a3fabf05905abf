"""Turn a NestPlan into single-line C insertions (rewrite/splice.py) into the original
text, so line numbers of the user's code never move.  Addresses are computed in uintptr_t
(wrapping, never out-of-bounds pointer arithmetic); the only loads added are of
invariant variables and, for indirect references, of index elements the loop
itself reads (clamped to the loop's last iteration) and, for a[c[b[i]]], of the
entry of the table c that such an element selects (skipped unless it is in c), and
of a row pointer A[i] (or p->q) in an iteration that reads it itself.

A strided reference becomes a stream the runtime steps (foresight_streams_step: one
countdown per pipelining loop in the body; the set-up at nest entry is one
foresight_nest_enter call on a static table of the nest's streams); indirect and
rows-ahead hints are written out here, as their look-ahead loads are typed.
"""

from __future__ import annotations

from dataclasses import replace

from foresight.compiler.ir import ArrayRef, Loop, sym_c
from foresight.compiler.options import CompileOptions
from foresight.compiler.rewrite.splice import Insertion
from foresight.compiler.schedule import distance
from foresight.compiler.schedule.plan import Hint, Move, NestPlan

U = "uintptr_t"
# Quiet calls an indirect site takes from the runtime at once: a hot loop pays one shared
# load and store per QUIET_TAKE iterations, taking no more than the loop has left.
QUIET_TAKE = 256


def slot(i: int) -> str:
    """A placeholder for a name in C text given to NestEmitter.shared (never in C)."""
    return f"\0{i}\0"


def _abs(x: str) -> str:
    return f"(({x}) > UINTPTR_MAX / 2 ? ({U})0 - ({x}) : ({x}))"


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def address(ref: ArrayRef, subst: dict[str, str]) -> str:
    """C text of the reference's address with loop variables replaced by `subst`."""
    off = ref.byte_offset()
    terms = [f"({U})({ref.base})"]
    for var, coeff in off.coeffs.items():
        terms.append(f"{sym_c(coeff)} * ({subst.get(var, f'({U})({var})')})")
    if off.const:
        terms.append(sym_c(off.const))
    return "(" + " + ".join(terms) + ")"


class Window:
    """What is left of a loop stepping ±1 to `bound`, for look-ahead loads that must stay
    within its iterations: `left` is C for the iterations after the current one (the
    generated code holds it in `__fs_left`), `fits(t)` says whether the iteration `t`
    ahead still runs, `at(t)` is that iteration's index, `last` the last one's."""

    def __init__(self, lp: Loop, bound: str, guarded: bool = False):
        self.v = f"(uintmax_t)({lp.var})"
        self.up = (lp.step or 1) > 0
        self.strict = lp.cond_op in ("<", ">")
        b = f"(uintmax_t){bound}"
        self.left = f"{b} - {self.v}" if self.up else f"{self.v} - {b}"
        if guarded:
            # A bound the current iteration may already be past (0 left then), compared
            # with signs as the program compares them (a negative bound is not huge).
            sb, sv = f"(intmax_t){bound}", f"(intmax_t)({lp.var})"
            self.left = (f"({sb} > {sv} ? {self.left} : 0)" if self.up
                         else f"({sv} > {sb} ? {self.left} : 0)")
        self.last = (b if not self.strict else f"{b} - 1" if self.up else f"{b} + 1")

    def fits(self, t: str) -> str:
        return f"__fs_left > {t}" if self.strict else f"__fs_left >= {t}"

    def at(self, t: str) -> str:
        return f"{self.v} + {t}" if self.up else f"{self.v} - {t}"


class NestEmitter:
    def __init__(self, plan: NestPlan, nest_id: int, opts: CompileOptions):
        self.plan, self.n, self.opts = plan, nest_id, opts
        self.decls: list[str] = []                  # C run at nest entry, in order
        self.known: dict[str, tuple[str, str]] = {}  # shared(): declaration -> name

    def name(self, what: str, k: int | str = "") -> str:
        return f"__fs_{what}_{self.n}_{k}" if k != "" else f"__fs_{what}_{self.n}"

    def insertions(self) -> list[Insertion]:
        plan, opts = self.plan, self.opts
        root = plan.facts.nest.root
        on = self.name("on")
        decls = [f"const int {on} = foresight_active();"]
        if opts.preset != "paper" and any(h.rows_for is not None for h in plan.hints):
            decls.append(f"const {U} {self.name('ahead')} = {on} ? ({U})"
                         "foresight_lookahead_bytes() : 0;")
        # Statements run on every entry of a loop inside the nest (by id), and the loops.
        resets: dict[int, list[str]] = {}
        reset_at: dict[int, Loop] = {}
        body: dict[int, list[str]] = {}
        # The pipelining loop chosen at nest entry (plan.Version): per reference with a
        # move only the entry can decide, how many of its moves hold in a row.
        # Values computed at nest entry are shared by the hints whose C text for them
        # is the same (self.shared).
        self.decls, self.known = decls, {}   # (insertions() runs once per emitter)
        chains: dict[int, str] = {}
        for h in plan.hints:
            if h.version is not None and id(h.version.moves) not in chains:
                chains[id(h.version.moves)] = self.shared(
                    "pv", f"const int {slot(0)} = {on} ? "
                    f"{version_c(h.version.moves, opts.block_size)} : 0;")

        def chosen(h: Hint) -> str:
            """C: whether the nest's entry chose h's pipelining loop (h has a version)."""
            assert h.version is not None
            return f"{chains[id(h.version.moves)]} == {h.version.taken}"

        # The nest's streams, one array in pipelining-loop order, set up at nest entry by
        # foresight_nest_enter from a static table (per stream its loop, lead and
        # constant flags; per loop its indirect references and the paper's fixed
        # distance) and four run-time values per stream (step, region, low, run-time
        # flags).  The library also computes each loop's distances, `ds` for its streams
        # and `di` for its indirect references, by schedule/distance.py's rule (with
        # one distance for both, a gather's page per iteration made it ~1,000
        # iterations, a few KiB of the streams: NAS CG's matrix streams arrived late).
        sp, dist = self.name("sp"), self.name("d")
        specs: list[str] = []      # struct foresight_nest_stream initialisers
        pipes: list[str] = []      # struct foresight_nest_pipe initialisers
        vals: list[str] = []       # four run-time values per stream
        for p, pipe in enumerate(plan.pipes()):
            pid = id(pipe)
            hints = [h for h in plan.hints if h.pipe is pipe]
            tag = pipe.var + str(pipe.line)
            ds, di = f"{dist}[{2 * p}]", f"{dist}[{2 * p + 1}]"
            # The pipe's streams: consecutive in the nest's array, one countdown
            # (foresight_streams_step).
            streams = [h for h in hints if h.rows_for is None and h.indirect_index is None]
            first, pc = len(specs), self.name("pc", tag)
            indirect = 0
            if streams:
                decls.append(f"{U} {pc} = 0;")
                if pipe is not root:
                    resets.setdefault(pid, []).append(f"{pc} = 0;")
                    reset_at[pid] = pipe
            for h in hints:
                hk = plan.hints.index(h)
                if h.rows_for is not None:
                    # Its own distance in rows, from each row's bytes (rows_code).
                    decls.append(f"int {self.name('started', hk)} = 0;")
                    if pipe is not root:
                        resets.setdefault(pid, []).append(f"{self.name('started', hk)} = 0;")
                        reset_at[pid] = pipe
                    continue
                if h.indirect_index is not None:
                    indirect += 1
                    decls.append(f"int {self.name('started', hk)} = 0;")
                    decls.append(f"unsigned long {self.name('skip', hk)} = 0;")
                    # Ends the site's random-access advice on every exit from the nest.
                    decls.append(f"struct foresight_site *{self.name('rs', hk)} "
                                 "__attribute__((cleanup(foresight_random_end))) = 0;")
                    # The prolog runs again on each entry of the loop whose range the
                    # look-ahead covers: the pipelining loop, or for the rows of a sparse
                    # matrix the loop over the rows (one prolog for all of them).
                    where = h.csr_end[2] if h.csr_end is not None else pipe
                    if where is not root:
                        resets.setdefault(id(where), []).append(
                            f"{self.name('started', hk)} = 0;")
                        reset_at[id(where)] = where
                    continue
                idle = (f"({chosen(h)} ? 0u : FORESIGHT_STREAM_IDLE)"
                        if h.version is not None else None)
                flags, values = self.stream_setup(h, idle)
                specs.append(f"{{{p}, {distance.of(plan, h, opts).lead}, {flags}}}")
                vals += values
            pipes.append(f"{{{indirect}, {distance.fixed(plan, pipe, opts)}}}")
            for h in hints:
                if h in streams:
                    continue
                hk = plan.hints.index(h)
                if h.rows_for is not None:
                    code = self.rows_code(h, hk, ds)
                else:
                    code = self.indirect_code(h, hk, di)
                if h.version is not None:   # run only in the version that chose its loop
                    code = f"if ({chosen(h)}) {{ {code} }}"
                body.setdefault(pid, []).append(code)
            if streams:
                code = self.streams_code(streams, f"{sp} + {first}" if first else sp, pc)
                # Only where the nest's entry chose a version that steps one of them.
                if all(h.version is not None for h in streams):
                    choices = dict.fromkeys(chosen(h) for h in streams)
                    code = f"if ({' || '.join(choices)}) {{ {code} }}"
                body.setdefault(pid, []).insert(0, code)
        nest = self.name("nest")
        statics = []
        if specs:
            statics.append(f"static const struct foresight_nest_stream {self.name('ns')}[] = "
                           f"{{{', '.join(specs)}}};")
            decls.append(f"struct foresight_stream {sp}[{len(specs)}];")
        statics.append(f"static const struct foresight_nest_pipe {self.name('np')}[] = "
                       f"{{{', '.join(pipes)}}};")
        statics.append(f"static const struct foresight_nest {nest} = "
                       f"{{{self.name('ns') if specs else '0'}, {self.name('np')}, "
                       f"{len(specs)}, {len(pipes)}, {opts.page_size}, {opts.block_size}}};")
        decls.append(f"{U} {dist}[{2 * len(pipes)}] = {{0}};")
        decls += statics
        if specs:
            decls.append(f"if ({on}) {{ const {U} __fs_nv[] = {{{', '.join(vals)}}}; "
                         f"foresight_nest_enter(&{nest}, {sp}, __fs_nv, {dist}); }}")
        else:
            decls.append(f"if ({on}) foresight_nest_enter(&{nest}, 0, 0, {dist});")
        out = [Insertion(root.start, 1, 3 * root.depth, "{ " + " ".join(decls) + " "),
               Insertion(root.end, 0, -3 * root.depth, " }")]
        for lid, lp in reset_at.items():
            out.append(Insertion(lp.start, 1, 3 * lp.depth + 1,
                                 "{ " + " ".join(resets[lid]) + " "))
            out.append(Insertion(lp.end, 0, -(3 * lp.depth + 1), " }"))
        for pipe in plan.pipes():
            pid = id(pipe)
            code = f"if ({on}) {{ " + " ".join(body[pid]) + " }"
            if pipe.body_compound:
                out.append(Insertion(pipe.body_start + 1, 1, 3 * pipe.depth + 2, " " + code))
            else:
                out.append(Insertion(pipe.body_start, 1, 3 * pipe.depth + 2,
                                     "{ " + code + " "))
                out.append(Insertion(pipe.body_end, 0, -(3 * pipe.depth + 2), " }"))
        return out

    def shared(self, what: str, decl: str, count: int = 1) -> str:
        """Declare `decl` at nest entry with slot(0) (and slot(1)... up to count) standing
        for fresh names, unless a declaration with the same text was made: then its
        names.  Returns the first name; the others are it with a suffix _1, _2..."""
        if decl not in self.known:
            name = self.name(what, sum(w == what for w, _ in self.known.values()))
            self.known[decl] = (what, name)
            text = decl
            for i in range(count):
                text = text.replace(slot(i), name if i == 0 else f"{name}_{i}")
            self.decls.append(text)
        return self.known[decl][1]

    def stream_setup(self, h: Hint, idle: str | None) -> tuple[str, list[str]]:
        """The set-up of h's stream for foresight_nest_enter: its constant flags (C) and
        its four run-time values (C): the step per iteration, across an outer loop its
        region and low, and the flags only known at run time (`idle`: C for the flag that
        leaves it alone because another version of the nest runs)."""
        opts = self.opts
        step = h.pipe.step or 1
        coeff = h.ref.byte_offset().coeff(h.pipe.var)
        delta = f"{sym_c(coeff)} * ({U})({step})" if step >= 0 else (
            f"({U})0 - {sym_c(coeff)} * ({U}){-step}")
        flags: list[str] = []
        dynamic = [] if idle is None else [idle]
        region = ["0", "0"]
        if h.inner_at_lower:
            fp = self.shared("fp", " ".join(self.region_decls(h)), 2)
            flags.append("FORESIGHT_STREAM_REGION")
            region = [fp, f"{fp}_1"]
        if rest_iterations(h.pipe) is not None:
            flags.append("FORESIGHT_STREAM_RUNS")
        if rows_tracked(h):
            flags.append("FORESIGHT_STREAM_ROWS")
        if h.release is not None:
            if h.release_if_exceeds is not None:
                vol = self.shared("vol", " ".join(volume_c(h.volume, opts.page_size, slot(0))))
                dynamic.append(f"({vol} > ({U})foresight_memory_bytes() ? "
                               "FORESIGHT_STREAM_RELEASE : 0u)")
            else:
                flags.append("FORESIGHT_STREAM_RELEASE")
        return (" | ".join(flags) or "0",
                [delta, *region, " | ".join(dynamic) or "0"])

    def region_decls(self, h: Hint) -> list[str]:
        """For a stream pipelined across an outer loop (Section 3.2.2.2), the region one
        iteration of it touches through the loops moved inside: `fp` bytes, starting `lo`
        bytes below the address at their lower bounds (loops moving it downwards).  A
        stride of a page or more, at least twice the region, prefetches just that region
        per iteration, in pages: a block there would read a block for a few bytes of
        each row (the first 4 doubles of 256 KiB rows, 768 MiB under a 64 MiB cap: 387 MiB
        read and 0.36-0.41 s with blocks, 12.4 MiB and 0.034-0.047 s with pages, O 0.72-
        0.84 s; `foresight run --mem 64M --cold --readahead-kb 128`)."""
        fp, lo = slot(0), slot(1)
        out = [f"{U} {fp} = ({U}){h.ref.elem_size}, {lo} = 0;"]
        for v in h.inner_at_lower:
            coeff = h.ref.byte_offset().coeff(v.var)
            c = const_of(coeff)
            e = f"{abs_c(coeff, v.step)} * {iterations_c(v)}"
            if c is not None:   # the direction is known (downwards: wraps past the middle)
                down = (c * v.step) % 2**64 > (2**64 - 1) // 2
                out.append(f"{fp} += {e};" + (f" {lo} += {e};" if down else ""))
                continue
            st = f"({sym_c(coeff)} * ({U})({v.step}))"
            out.append(f"{{ const {U} __fs_e = {e}; "
                       f"{fp} += __fs_e; if ({st} > UINTPTR_MAX / 2) {lo} += __fs_e; }}")
        return out

    def subst(self, h: Hint) -> dict[str, str]:
        return {lp.var: sym_c(lp.lower_sym or {}) for lp in h.inner_at_lower}

    def streams_code(self, streams: list[Hint], sp: str, pc: str) -> str:
        """Per iteration of the pipelining loop: count down to the iteration where one of
        its streams' look-ahead address enters a new granule, and there let the runtime
        step the streams due: prefetch ahead of each reference and release behind it
        (foresight_streams_step in foresight.h), given each one's current and trailing
        address.

        A stream is the reference's address sequence, not one run of the pipelining
        loop: the countdown restarts at 0 where the loop starts (the runtime then decides
        whether the run continues the last one).  Where the loop's bound can be evaluated
        again, the step is told the iterations left in the run, so that hints stay within
        it (past its end may be another object, or nothing)."""
        sites, at = [], []
        for h in streams:
            site = self.name("site", self.plan.hints.index(h))
            # A hint of a version of the nest (plan.Version) names its pipelining loop.
            label = h.ref.text if h.version is None else f"{h.ref.text} (across {h.pipe.var})"
            sites.append(f"FORESIGHT_SITE({site}, {_c_string(label)});")
            now = address(h.ref, self.subst(h))
            at += [now, address(h.release, self.subst(h)) if h.release is not None else "0"]
        names = ", ".join("&" + self.name("site", self.plan.hints.index(h)) for h in streams)
        rest = rest_iterations(streams[0].pipe) or "0"
        return (f"if ({pc} > 1) {pc}--; else {{ " + " ".join(sites) +
                f" static struct foresight_site *const __fs_ss[] = {{{names}}}; "
                f"const {U} __fs_at[] = {{{', '.join(at)}}}; "
                f"{pc} = foresight_streams_step({sp}, {len(streams)}, __fs_ss, {pc}, __fs_at, "
                f"{rest}); }}")

    def rows_code(self, h: Hint, k: int, d: str) -> str:
        """Rows ahead: at each row (iteration of the row loop), the row pointer of the row
        `n` rows ahead is read, never past the loop's last iteration and only when that
        row's loop runs (its bounds evaluated for that row), and the row's start is
        prefetched (the whole row, up to the look-ahead bytes); `n` covers the look-ahead
        bytes with rows the size of the current one.  On the first iteration the rows
        before it likewise.  The stream along the row carries on from there."""
        lp, along = h.pipe, h.rows_for
        assert along is not None and h.ref.base_rows is not None
        assert along.lower_aff is not None
        rows, index, psize = h.ref.base_rows
        site = self.name("site", k)
        # A bound fixed for the nest (members of invariant variables) is evaluated again.
        w = Window(lp, sym_bound(lp) if lp.bounds_invariant else f"({lp.upper})")
        terms = [f"{sym_c(c)} * ({U})__fs_j" for c in index.coeffs.values()]
        terms.append(sym_c(index.const))
        pointer = (f"({U})*(__typeof__({rows}[0]) *)(({U})({rows}) + "
                   f"({' + '.join(terms)}) * ({U}){psize})")

        def row_bytes(row: str) -> str:
            """Bytes the loop along the row reads in row `row` (0: it runs no iteration)."""
            lo = f"(intmax_t)({affine_c(along.lower_aff, {lp.var: row})})"
            hi = (f"(intmax_t)({affine_c(along.upper_aff, {lp.var: row})})"
                  if along.upper_aff is not None else f"(intmax_t)({along.upper})")
            last = hi if along.cond_op == "<=" else f"({hi} - 1)"
            stride = sym_c(h.ref.byte_offset().coeff(along.var))
            return (f"({last} >= {lo} ? ({U})(({last} - {lo}) / {along.step}) * {stride} "
                    f"+ ({U}){h.ref.elem_size} : ({U})0)")

        start = address(replace(h.ref, base="__fs_rp", offset=None),
                        {lp.var: f"({U})__fs_j",
                         along.var: affine_c(along.lower_aff, {lp.var: f"({U})__fs_j"})})
        ahead = self.name("ahead")
        span = "__fs_rb" if self.opts.preset == "paper" else (
            f"(__fs_rb < {ahead} ? __fs_rb : {ahead})")
        fetch = (f"{{ const {U} __fs_rb = {row_bytes(f'({U})__fs_j')}; if (__fs_rb != 0) {{ "
                 f"const {U} __fs_rp = {pointer}; if (__fs_rp != 0) "
                 f"foresight_prefetch_at(&{site}, (const void *){start}, {span}); }} }}")
        if self.opts.preset == "paper":
            rows_ahead = f"const uintmax_t __fs_n = (uintmax_t){d};"
        else:
            rows_ahead = (f"(void){d}; const {U} __fs_cb = {row_bytes(f'({U})({lp.var})')}; "
                          f"const uintmax_t __fs_n = __fs_cb == 0 ? 1 : "
                          f"({ahead} + __fs_cb - 1) / __fs_cb;")
        started = self.name("started", k)
        prolog = (f"if (!{started}) {{ uintmax_t __fs_t; {started} = 1; "
                  f"for (__fs_t = 1; __fs_t < __fs_n && {w.fits('__fs_t')}; __fs_t++) {{ "
                  f"const uintmax_t __fs_j = {w.at('__fs_t')}; {fetch} }} }}")
        return ("{ " + f"FORESIGHT_SITE({site}, {_c_string(h.ref.text + ' (rows ahead)')}); "
                f"const uintmax_t __fs_left = {w.left}; {rows_ahead} {prolog} "
                f"if ({w.fits('__fs_n')}) {{ const uintmax_t __fs_j = {w.at('__fs_n')}; "
                f"{fetch} }} " + "}")

    def indirect_code(self, h: Hint, k: int, d: str) -> str:
        lp: Loop = h.pipe
        ix = h.indirect_index
        assert ix is not None
        site = self.name("site", k)
        if h.csr_end is not None:
            rows, upper, row, last = h.csr_end
            w = Window(lp, f"(({rows})[{affine_c(upper, {row.var: last})}])", guarded=True)
        else:
            w = Window(lp, sym_bound(lp))
        ixaddr = address(ix, {lp.var: f"({U})__fs_j"})
        target = f"(({U})({h.ref.base}) + ({U})__fs_x * {sym_c(h.ref.strides[0])})"
        load = f"(uintmax_t)*(__typeof__({ix.text}) *){ixaddr}"
        fetch = f"foresight_prefetch_at(&{site}, (const void *){target}, {h.ref.elem_size});"
        mid = h.indirect_middle
        if mid is not None:
            # a[c[b[i]]]: c[b[j]] is read only when b[j] is inside the table c (its size is
            # known); a value from outside it is skipped, never dereferenced.
            assert mid.object_bytes is not None
            n = mid.object_bytes // mid.elem_size
            midaddr = f"(({U})({mid.base}) + ({U})__fs_y * {sym_c(mid.strides[0])})"
            fetch = (f"if (__fs_y < (uintmax_t){n}) {{ const uintmax_t __fs_x = "
                     f"(uintmax_t)*(__typeof__({mid.text}) *){midaddr}; {fetch} }}")
            x = "__fs_y"
        else:
            x = "__fs_x"
        # Prolog, on the first iteration: the targets of this and the next d - 1
        # iterations (never past the loop's last one), as the steady state covers i + d.
        started = self.name("started", k)
        prolog = (f"if (!{started}) {{ uintmax_t __fs_t; {started} = 1; "
                  f"foresight_random_begin(&{site}, &{self.name('rs', k)}); "
                  f"for (__fs_t = 0; __fs_t < (uintmax_t){d} && {w.fits('__fs_t')}; "
                  f"__fs_t++) {{ const uintmax_t __fs_j = {w.at('__fs_t')}; "
                  f"const uintmax_t {x} = {load}; {fetch} }} }}")
        # A site whose targets keep being resident (a small table) skips the look-ahead
        # load and the call while the runtime says it is quiet, counting the skips down
        # in a local taken QUIET_TAKE at a time (no store to the shared site per call),
        # never more than the loop has iterations left (they count as skipped calls).
        skip = self.name("skip", k)
        take = f"(__fs_left < {QUIET_TAKE} ? (unsigned long)__fs_left : {QUIET_TAKE}ul)"
        return ("{ " + f"FORESIGHT_SITE({site}, {_c_string(h.ref.text)}); "
                f"const uintmax_t __fs_left = {w.left}; {prolog} "
                f"if ({skip} != 0) {skip}--; "
                f"else if (({skip} = foresight_site_quiet_take(&{site}, {take})) != 0) "
                f"{skip}--; "
                f"else if (__fs_left != 0) {{ const uintmax_t __fs_j = "
                f"{w.fits(f'(uintmax_t){d}')} ? "
                f"{w.at(f'(uintmax_t){d}')} : {w.last}; "
                f"const uintmax_t {x} = {load}; {fetch} }} " + "}")


def const_of(a: dict | None) -> int | None:
    """The value of a symbolic expression that is a constant, else None."""
    if not a:
        return 0
    return a[()] if list(a) == [()] else None


def _abs_value(v: int) -> int:
    """|v| as the generated code computes it: v wraps to 64 bits, and a value above
    UINTPTR_MAX / 2 stands for a negative one."""
    v %= 2**64
    return v if v <= (2**64 - 1) // 2 else 2**64 - v


def abs_c(a: dict, step: int = 1) -> str:
    """C for |a · step| in uintptr_t; folded when `a` is a constant."""
    c = const_of(a)
    if c is None:
        return _abs(f"{sym_c(a)} * ({U})({step})" if step != 1 else sym_c(a))
    v = _abs_value(c * step)
    return f"({U}){v}" + ("u" if v > 2**63 - 1 else "")   # 2^63 needs an unsigned literal


def _signed_c(a: dict | None) -> str:
    """C for `a` evaluated in uintptr_t and read as a signed value (intmax_t)."""
    c = const_of(a)
    if c is not None and -2**63 <= c < 2**63:
        return f"(intmax_t){c}" if c >= 0 else f"((intmax_t){c + 1} - 1)"
    return f"(intmax_t)({sym_c(a or {})})"


def iterations_c(v: Loop) -> str:
    """C for the iterations of `v` after its first (0 when it runs none), from bounds on
    invariant variables evaluated as signed values at nest entry."""
    lo, hi = _signed_c(v.lower_sym), _signed_c(v.upper_sym)
    if v.step > 0:
        first, last = lo, hi if v.cond_op == "<=" else f"({hi} - 1)"
    else:
        first, last = lo, hi if v.cond_op == ">=" else f"({hi} + 1)"
        first, last = last, first
    span = last if first == "(intmax_t)0" else f"({last} - {first})"
    if abs(v.step) != 1:
        span = f"{span} / {abs(v.step)}"
    return f"({last} >= {first} ? ({U})({span}) : ({U})0)"


def move_c(move: Move, block: int) -> str:
    """C for whether all iterations of the move's loop step the address by less than a
    block in total, |coeff · step| · trip < block, written so that nothing overflows."""
    v = move.loop
    c = const_of(move.coeff)
    if c is not None:
        a = _abs_value(c * v.step)
        if a == 0 or (block - 1) // a == 0:   # never / always a block or more
            return "1" if a == 0 else "0"
        return f"{iterations_c(v)} < ({U}){(block - 1) // a}"
    a = abs_c(move.coeff, v.step)
    return (f"({a} == 0 || {iterations_c(v)} < (({U}){block} - 1) / {a})")


def version_c(moves: tuple[Move, ...], block: int) -> str:
    """C for how many of `moves` hold in a row, innermost first: the candidate pipelining
    loop the nest takes (plan.Version)."""
    out = str(len(moves))
    for taken in reversed(range(len(moves))):
        out = f"({move_c(moves[taken], block)} ? {out} : {taken})"
    return out


def volume_c(volume: list[tuple[int, list[tuple[dict | None, Loop]]]], page: int,
             var: str) -> list[str]:
    """C statements that set `var` to the bytes one iteration of a loop touches
    (plan.runtime_volume), in memory rather than in address range: per reference, from
    its element outward through the inner loops moving it (innermost first), each loop
    adds per extra iteration its stride, but at most the footprint so far rounded up to
    pages, so a loop stepping a page or more adds whole pages, not the bytes it skips (a
    line of `rhs[k][j][i][m]` along k touches one page per plane, not the planes); a loop
    reading a new row pointer per iteration (stride None) adds the whole footprint.
    Bounds are evaluated as signed values at nest entry."""
    out = [f"{U} {var} = 0;"]
    for elem, moves in volume:
        steps = [f"{U} __fs_f = ({U}){elem};"]
        for coeff, v in reversed(moves):
            n1 = iterations_c(v)
            stride = "UINTPTR_MAX" if coeff is None else abs_c(coeff)
            steps.append(f"{{ const {U} __fs_st = {stride}, __fs_pg = "
                         f"(__fs_f + ({U}){page} - 1) & ~(({U}){page} - 1); "
                         f"__fs_f += {n1} * (__fs_st < __fs_pg ? __fs_st : __fs_pg); }}")
        out.append("{ " + " ".join(steps) + f" {var} += __fs_f; }}")
    return out


def affine_c(aff, subst: dict[str, str]) -> str:
    """C text (uintptr_t arithmetic) of an affine function of loop variables, with some
    variables replaced by `subst`."""
    terms = [sym_c(c) + f" * ({U})({subst.get(var, var)})" for var, c in aff.coeffs.items()]
    terms.append(sym_c(aff.const))
    return "(" + " + ".join(terms) + ")"


def rows_tracked(h: Hint) -> bool:
    """A stream along rows reached through row pointers (A[i] of double **A), whose
    runs are checked for lying one after another: only then do hints go past a run's end."""
    return (bool(h.ref.base_loops) and not h.inner_at_lower
            and rest_iterations(h.pipe) is not None)


def rest_iterations(lp: Loop) -> str | None:
    """C text of the iterations `lp` runs after the current one, from its own bound, when
    the bound can be evaluated again in the body; None otherwise."""
    if not lp.bound_runtime or lp.upper is None or not lp.step:
        return None
    v, bound = f"(uintmax_t)({lp.var})", f"(uintmax_t)({lp.upper})"
    left = f"({bound} - {v})" if lp.step > 0 else f"({v} - {bound})"
    if lp.cond_op in ("<", ">"):
        left = f"({left} - 1)"
    return f"({left} / (uintmax_t){abs(lp.step)})"


def sym_bound(lp: Loop) -> str:
    """The loop's bound as C (uintptr_t arithmetic) from its affine form (a loop whose
    bounds are invariant has one)."""
    assert lp.upper_aff is not None
    return affine_c(lp.upper_aff, {})
