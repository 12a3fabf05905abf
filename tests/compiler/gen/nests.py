"""Random C programs of loop nests, for the differential test of `foresight cc`.

`generate(seed)` returns one translation unit of several kernels.  Each kernel is a loop
nest over its own arrays, of one of the shapes `foresight cc` transforms (docs/compiler.md):

- affine: 1-4 deep, for/while/do loops counting up or down, steps, triangular bounds,
  bounds in locals, parameters or globals (some shrunk by the body or by a call, some a
  call that counts its calls), arrays of several element types and layouts (flat,
  linearized `A[i*m + j]`, pointers to variably modified arrays, row pointers with rows
  of one length or triangular and rows swapped by the nest, static arrays, stack VLAs,
  arrays of structs, pointer members), group references, reads, writes and reductions,
  early `break`, `continue` and `goto`, calls, bodies from macros (braced or a single
  statement); in a threaded program some run in two pthreads, each over its own part of
  the outer loop;
- indirect: gathers and scatters `x[b[i]]`, two levels through a small table
  `t[c[b[i]]]`, bucket fills `out[pos[key[i]]++]`, an index rewritten ahead of the loop
  or read by a call, rows gathered `A[b[i]][j]`;
- csr: rows of compressed sparse row matrices, `for (k = rp[i]; k < rp[i + 1]; k++)`,
  including empty rows, row offsets, sub-ranges and row pointers that are not monotone;
- walk: pointer walks forwards, backwards, with strides, over rows and structs;
- member: struct members `h->v[i]`, chains `S->g->v[i]`, rows in a struct with member
  bounds (some changed by the nest), repointed members, flexible array members, and
  NULL bases of loops that never run.

Every program is valid C without undefined behaviour by construction: subscripts are
generated with their value ranges and every array is sized to exactly the largest
element the program touches.  Arrays from `galloc()` end flush against a PROT_NONE page
(and start after one), so a look-ahead load one element past the end faults even where
AddressSanitizer does not instrument the memory (mmap); index arrays hold values far out
of range wherever the program itself does not read them.  Integer data stays within
[0, 1024), so no arithmetic overflows; floating-point values never become integers.
After each kernel the program prints a hash of every array, scalar result and counter.

Print one program: `python3 tests/compiler/gen/nests.py SEED [--kernels N] [--threads]`.
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

# Values of integer arrays stay below the mask + 1 (and never go negative).
INT_MASK = {"signed char": 127, "unsigned char": 255, "short": 1023, "unsigned short": 1023,
            "int": 1023, "unsigned": 1023, "long": 1023, "unsigned long": 1023,
            "long long": 1023}
FP_TYPES = ("double", "float")
ELEM_TYPES = ["double"] * 5 + ["float"] * 2 + ["int"] * 3 + ["long"] * 2 + [
    "unsigned", "short", "unsigned char", "signed char", "unsigned short", "long long",
    "unsigned long"]

PRELUDE = r"""#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
{threads}
/* Sizes the compiler cannot see: opaque(v) is v at run time. */
static volatile long fs_zero;
static long opaque(long v) {{ return v + fs_zero; }}

/* FNV-1a over every byte a kernel leaves behind, printed per kernel. */
static unsigned long long fs_hash = 1469598103934665603ull;
static void hmix(const void *p, size_t n) {{
  const unsigned char *c = p;
  for (size_t q = 0; q < n; q++) {{ fs_hash ^= c[q]; fs_hash *= 1099511628211ull; }}
}}
static void hout(int k) {{
  printf("k%d %016llx\n", k, fs_hash);
  fs_hash = 1469598103934665603ull;
}}

/* bytes of zeroed memory between two PROT_NONE pages, ending flush against the second */
static void *galloc(size_t bytes) {{
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (bytes + pg - 1) / pg * pg;
  char *base = mmap(NULL, body + 2 * pg, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {{ perror("mmap"); exit(3); }}
  if (mprotect(base, pg, PROT_NONE) || mprotect(base + pg + body, pg, PROT_NONE)) {{
    perror("mprotect"); exit(3);
  }}
  return base + pg + body - bytes;
}}
static void gfree(void *p, size_t bytes) {{
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (bytes + pg - 1) / pg * pg;
  munmap((char *)p + bytes - body - pg, body + 2 * pg);
}}
"""

THREAD_HELPERS = r"""#include <pthread.h>
/* two threads, each running fn over its own half of [0, n) */
struct fs_part { long lo, hi; double rd; unsigned long ri; };
static void fs_run2(void *(*fn)(void *), long n, struct fs_part part[2]) {
  pthread_t th[2];
  part[0].lo = 0; part[0].hi = n / 2; part[1].lo = n / 2; part[1].hi = n;
  for (int q = 0; q < 2; q++)
    if (pthread_create(&th[q], NULL, fn, &part[q])) { fputs("pthread_create\n", stderr); exit(3); }
  for (int q = 0; q < 2; q++) pthread_join(th[q], NULL);
}
"""


def tname(ctype: str) -> str:
    return ctype.replace(" ", "_")


def is_fp(ctype: str) -> bool:
    return ctype in FP_TYPES


class Unit:
    """The translation unit being built: helpers (once each), globals, functions, main."""

    def __init__(self, seed: int, threads: bool) -> None:
        self.seed = seed
        self.threads = threads
        self.helpers: dict[str, str] = {}
        self.globals: list[str] = []
        self.functions: list[str] = []
        self.tests: list[str] = []
        self.kinds: list[str] = []

    def helper(self, name: str, text: str) -> str:
        self.helpers.setdefault(name, text)
        return name

    def fill(self, ctype: str) -> str:
        """fill_T(p, n, s): n values from an LCG seeded with s, within the type's mask."""
        if is_fp(ctype):
            val = f"({ctype})((s >> 16) & 1023u) * ({ctype})0.125"
        else:
            val = f"({ctype})((s >> 16) & {INT_MASK[ctype]}u)"
        return self.helper(f"fill_{tname(ctype)}", (
            f"static void fill_{tname(ctype)}({ctype} *p, size_t n, unsigned s) {{\n"
            f"  for (size_t q = 0; q < n; q++) {{ s = s * 1103515245u + 12345u; "
            f"p[q] = {val}; }}\n}}\n"))

    def text(self) -> str:
        kinds = ", ".join(self.kinds)
        head = (f"/* generated by tests/compiler/gen/nests.py, seed {self.seed}"
                f"{', threads' if self.threads else ''}: {kinds} */\n")
        body = [head, PRELUDE.format(threads=THREAD_HELPERS if self.threads else "")]
        body += self.globals
        body += list(self.helpers.values())
        body += self.functions
        body.append("int main(void) {\n" + "".join(f"  {t}();\n" for t in self.tests)
                    + "  return 0;\n}\n")
        return "\n".join(body)


# ---------------------------------------------------------------------------------------
# Loops


@dataclass
class Loop:
    """One loop; its index takes values within [lo, hi], a subset of [0, E)."""
    var: str
    ctype: str
    ext: str                  # C name of the extent E
    E: int
    lo: int
    hi: int
    init: str                 # first value of the index (C)
    cond: str                 # condition (C)
    step: str                 # statement stepping the index, without ';'
    form: str                 # for | while | do | countdown
    up: bool = True
    below_outer: bool = False  # triangular: the index never exceeds the outer loop's

    @property
    def continue_ok(self) -> bool:
        return self.form in ("for", "countdown")

    def wrap(self, body: list[str], single: bool, rng: random.Random) -> list[str]:
        """The loop around body (lines); single: body is one statement."""
        ind = ["  " + b for b in body]
        if self.form == "countdown":
            head = f"for ({self.ctype} {self.var} = ({self.ctype}){self.ext}; {self.cond};)"
        elif self.form == "for":
            cond = self.cond if rng.random() < 0.9 else f"/* bound */ {self.cond}"
            head = f"for ({self.ctype} {self.var} = {self.init}; {cond}; {self.step})"
        elif self.form == "while":
            return ["{", f"  {self.ctype} {self.var} = {self.init};",
                    f"  while ({self.cond}) {{", *["  " + b for b in ind],
                    f"    {self.step};", "  }", "}"]
        else:
            return ["{", f"  {self.ctype} {self.var} = {self.init};",
                    f"  if ({self.cond}) do {{", *["  " + b for b in ind],
                    f"    {self.step};", f"  }} while ({self.cond});", "}"]
        if single and rng.random() < 0.5:
            return [head, *ind]
        return [head + " {", *ind, "}"]


def make_loop(rng: random.Random, var: str, ext: str, E: int, outer: Loop | None = None,
              part: tuple[str, str] | None = None, simple: bool = False,
              form: str | None = None) -> Loop:
    """A random loop whose index stays within [0, E).

    outer: make the loop triangular on it (it must have the same extent).  part: the
    index runs over [part[0], part[1]) (a thread's share).  simple: counting up by one
    from 0 or 1 to E (loops whose bound other code relies on).  form: for, while or do
    (by default mostly for: `foresight cc` analyses only for loops).
    """
    ctype = rng.choice(["long"] * 5 + ["int"] * 3 + ["size_t"] * 2)
    if form is None:
        form = rng.choice(["for"] * 10 + ["while", "do"])
    inc = f"{var}++" if rng.random() < 0.7 else f"++{var}"
    if part is not None:
        if ctype != "size_t" and rng.random() < 0.25:
            return Loop(var, ctype, ext, E, 0, E - 1, f"{part[1]} - 1", f"{var} >= {part[0]}",
                        f"{var}--", form, up=False)
        return Loop(var, ctype, ext, E, 0, E - 1, part[0], f"{var} < {part[1]}", inc, form)
    if simple:
        lo0 = rng.choice([0, 0, 1])
        return Loop(var, ctype, ext, E, lo0, E - 1, str(lo0), f"{var} < {ext}", inc, form)
    if outer is not None:
        o = outer.var
        kind = rng.choice(["tri_hi", "tri_hi", "tri_lo", "tri_down"])
        if kind == "tri_down" and ctype == "size_t":
            kind = "tri_hi"
        if kind == "tri_hi":
            lo0 = rng.choice([0, 0, 1])
            cond = rng.choice([f"{var} <= {o}", f"{var} < {o} + 1"])
            return Loop(var, ctype, ext, E, lo0, max(lo0, outer.hi), str(lo0), cond, inc, form,
                        below_outer=True)
        if kind == "tri_lo":
            return Loop(var, ctype, ext, E, outer.lo, E - 1, f"({ctype}){o}",
                        f"{var} < {ext}", inc, form)
        lo0 = rng.choice([0, 1])
        return Loop(var, ctype, ext, E, lo0, max(lo0, outer.hi), f"({ctype}){o}",
                    f"{var} >= {lo0}", f"{var}--", form, up=False, below_outer=True)
    kind = rng.choice(["up"] * 12 + ["down"] * 4 + ["countdown"])
    if kind == "down" and ctype == "size_t":
        kind = "countdown"
    if kind == "countdown":
        lo0 = rng.choice([0, 0, 1])
        ct = rng.choice(["size_t", "unsigned"])
        return Loop(var, ct, ext, E, lo0, E - 1, "", f"{var}-- > {lo0}", "", "countdown",
                    up=False)
    s = rng.choice([1] * 6 + [2, 3])
    if kind == "down":
        lo0 = rng.choice([0, 0, 1, 2])
        cond = f"{var} >= {lo0}" if lo0 == 0 or rng.random() < 0.5 else f"{var} > {lo0 - 1}"
        step = f"{var}--" if s == 1 else f"{var} -= {s}"
        first = (E - 1) - ((E - 1 - lo0) // s) * s
        return Loop(var, ctype, ext, E, first, E - 1, f"{ext} - 1", cond, step, form, up=False)
    lo0 = rng.choice([0, 0, 0, 1, 2])
    bound = rng.choice(["<", "<", "<=", "-c"] + (["!="] if s == 1 else []))
    last_excl = E
    if bound == "<":
        cond = f"{var} < {ext}"
    elif bound == "<=":
        cond = f"{var} <= {ext} - 1"
    elif bound == "!=":
        cond = f"{var} != {ext}"
    else:
        c = rng.randint(1, 2)
        cond, last_excl = f"{var} < {ext} - {c}", E - c
    hi = lo0 + ((last_excl - 1 - lo0) // s) * s if last_excl > lo0 else lo0
    step = inc if s == 1 else f"{var} += {s}"
    return Loop(var, ctype, ext, E, lo0, hi, str(lo0), cond, step, form)


# ---------------------------------------------------------------------------------------
# Affine kernels


@dataclass(frozen=True)
class Sub:
    """A subscript: sum of coef * index over loops (by position), plus const; or, with
    rev, ext - 1 - index of that loop."""
    terms: tuple[tuple[int, int], ...]
    const: int = 0
    rev: int | None = None

    def text(self, loops: list[Loop]) -> str:
        if self.rev is not None:
            lp = loops[self.rev]
            return f"({lp.ext} - 1 - {lp.var})"
        parts = [lp_var if c == 1 else f"{c} * {lp_var}"
                 for c, lp_var in ((c, loops[k].var) for c, k in self.terms)]
        s = " + ".join(parts) if parts else str(self.const)
        if parts and self.const:
            s += f" + {self.const}" if self.const > 0 else f" - {-self.const}"
        return s

    def range(self, loops: list[Loop]) -> tuple[int, int]:
        if self.rev is not None:
            lp = loops[self.rev]
            return lp.E - 1 - lp.hi, lp.E - 1 - lp.lo
        lo = self.const + sum(c * loops[k].lo for c, k in self.terms)
        hi = self.const + sum(c * loops[k].hi for c, k in self.terms)
        return lo, hi


@dataclass
class Arr:
    name: str
    elem: str
    layout: str               # flat lin vla rows jagged static stack aos aos2 member mrows
    rank: int
    subs: list[tuple[Sub, ...]] = field(default_factory=list)
    written: bool = False
    dims: list[int] = field(default_factory=list)
    row_extra: int = 0        # jagged: row r has max(0, r + row_extra) elements

    def dimvar(self, d: int) -> str:
        return f"{self.name}_m{d}"

    def ref(self, sub: tuple[Sub, ...], loops: list[Loop]) -> str:
        s = [x.text(loops) for x in sub]
        n = self.name
        if self.layout in ("flat", "stack"):
            return f"{n}[{s[0]}]"
        if self.layout == "lin":
            if self.rank == 2:
                return f"{n}[({s[0]}) * {self.dimvar(1)} + {s[1]}]"
            return f"{n}[(({s[0]}) * {self.dimvar(1)} + {s[1]}) * {self.dimvar(2)} + {s[2]}]"
        if self.layout == "aos":
            return f"{n}[{s[0]}].x"
        if self.layout == "aos2":
            return f"{n}[{s[0]}].c[{s[1]}]"
        if self.layout == "member":
            return f"{n}->v[{s[0]}]"
        if self.layout == "mrows":
            return f"{n}->r[{s[0]}][{s[1]}]"
        return n + "".join(f"[{x}]" for x in s)

    @property
    def count(self) -> int:
        c = 1
        for d in self.dims:
            c *= d
        return c


class Kernel:
    """Names and text shared by every kind of kernel: its scalars (extents, dims), its
    arrays' declarations, allocation, hashing and freeing, and where they live."""

    def __init__(self, u: Unit, rng: random.Random, kid: int, mode: str) -> None:
        self.u, self.rng, self.kid, self.mode = u, rng, kid, mode
        self.p = f"k{kid}_"
        self.scalars: list[tuple[str, int]] = []   # (name, value): long, opaque at run time
        self.decls: list[tuple[str, str]] = []     # (name, declaration) of pointer vars
        self.stack: list[tuple[str, str]] = []     # (name, parameter) of stack arrays
        self.setup: list[str] = []                 # test function: allocate and fill
        self.hash: list[str] = []
        self.free: list[str] = []
        self.seedc = rng.randrange(1 << 30)

    def scalar(self, name: str, value: int) -> str:
        self.scalars.append((name, value))
        return name

    def next_seed(self) -> int:
        self.seedc += 7919
        return self.seedc % (1 << 30)

    def alloc(self, name: str, decl: str, bytes_: str, guard: bool | None = None) -> None:
        """name = bytes_ of fresh memory: guard pages (mostly) or malloc."""
        if guard is None:
            guard = self.rng.random() < 0.8
        fn = "galloc" if guard else "malloc"
        self.decls.append((name, decl))
        self.setup.append(f"{name} = {fn}({bytes_});")
        if not guard:
            self.setup.append(f"if (!{name}) exit(3);")
        self.free.append(f"gfree({name}, {bytes_});" if guard else f"free({name});")

    def flat_array(self, name: str, elem: str, count: int | str, fill: bool = True,
                   guard: bool | None = None, const: bool = False) -> None:
        q = "const " if const and self.mode == "param" else ""
        if not fill:
            guard = True   # zeroed memory: every byte hashed is defined
        self.alloc(name, f"{q}{elem} *{name}", f"(size_t)({count}) * sizeof({elem})", guard)
        if fill:
            self.setup.append(f"{self.u.fill(elem)}(({elem} *){name}, (size_t)({count}), "
                              f"{self.next_seed()}u);")
        self.hash.append(f"hmix({name}, (size_t)({count}) * sizeof({elem}));")

    def row_arrays(self, rows: str, d0: int, length: str, e: str,
                   init: str | None = None) -> None:
        """rows[r] for r < d0: a fresh guarded array of `length` (C, may use r) elements of
        type e, filled (or set by init, C using r), hashed, and freed before rows is."""
        ln = f"(size_t)({length})"
        init = init or f"{self.u.fill(e)}({rows}[r], {ln}, {self.next_seed()}u + (unsigned)r);"
        loop = f"for (long r = 0; r < {d0}; r++)"
        self.setup.append(f"{loop} {{ {rows}[r] = galloc({ln} * sizeof({e})); {init} }}")
        self.hash.append(f"{loop} hmix({rows}[r], {ln} * sizeof({e}));")
        self.free.insert(0, f"{loop} gfree({rows}[r], {ln} * sizeof({e}));")

    def array(self, a: Arr) -> None:
        """Declare, allocate, fill, hash and free an affine kernel's array."""
        u, e, n = self.u, a.elem, a.name
        for d in range(1, a.rank):
            if a.layout in ("lin", "vla"):
                self.scalar(a.dimvar(d), a.dims[d])
        if a.layout in ("flat", "lin"):
            self.flat_array(n, e, a.count, const=not a.written)
        elif a.layout == "vla":
            tail = "".join(f"[{a.dimvar(d)}]" for d in range(1, a.rank))
            self.alloc(n, f"{e} (*{n}){tail}", f"(size_t){a.dims[0]} * sizeof *{n}")
            self.setup.append(f"{u.fill(e)}(({e} *){n}, {a.count}u, {self.next_seed()}u);")
            self.hash.append(f"hmix({n}, (size_t){a.count} * sizeof({e}));")
        elif a.layout == "static":
            dims = "".join(f"[{d}]" for d in a.dims)
            u.globals.append(f"static {e} {n}{dims};")
            self.setup.append(f"{u.fill(e)}(({e} *){n}, {a.count}u, {self.next_seed()}u);")
            self.hash.append(f"hmix({n}, sizeof {n});")
        elif a.layout == "stack":
            self.setup.append(f"{e} {n}[{self.scalar(a.dimvar(0), a.dims[0])}];")
            self.stack.append((n, f"{e} *{n}"))
            self.setup.append(f"{u.fill(e)}({n}, {a.count}u, {self.next_seed()}u);")
            self.hash.append(f"hmix({n}, sizeof {n});")
        elif a.layout in ("rows", "jagged"):
            x = a.row_extra
            self.alloc(n, f"{e} **{n}", f"(size_t){a.dims[0]} * sizeof({e} *)")
            self.row_arrays(n, a.dims[0], f"r + {x} > 0 ? r + {x} : 0" if a.layout == "jagged"
                            else str(a.dims[1]), e)
        elif a.layout == "aos":
            st = f"{n}_s"
            u.globals.append(f"struct {st} {{ {e} x; double y; int tag; }};")
            self.alloc(n, f"struct {st} *{n}", f"(size_t){a.dims[0]} * sizeof(struct {st})")
            mask = "" if is_fp(e) else f" & {INT_MASK[e]}"
            self.setup.append(f"for (long r = 0; r < {a.dims[0]}; r++) {{ {n}[r].x = ({e})((r "
                              f"* 37 + {self.next_seed() % 1000}){mask}); {n}[r].y = "
                              f"(double)r * 0.5; {n}[r].tag = (int)(r & 7); }}")
            self.hash.append(f"for (long r = 0; r < {a.dims[0]}; r++) {{ hmix(&{n}[r].x, "
                             f"sizeof {n}[r].x); hmix(&{n}[r].y, sizeof(double)); "
                             f"hmix(&{n}[r].tag, sizeof(int)); }}")
        elif a.layout == "aos2":
            st = f"{n}_s"
            u.globals.append(f"struct {st} {{ int tag; {e} c[{a.dims[1]}]; }};")
            self.alloc(n, f"struct {st} *{n}", f"(size_t){a.dims[0]} * sizeof(struct {st})")
            self.setup.append(f"for (long r = 0; r < {a.dims[0]}; r++) {{ {n}[r].tag = (int)r;"
                              f" {u.fill(e)}({n}[r].c, {a.dims[1]}u, {self.next_seed()}u + "
                              "(unsigned)r); }")
            self.hash.append(f"for (long r = 0; r < {a.dims[0]}; r++) {{ hmix(&{n}[r].tag, "
                             f"sizeof(int)); hmix({n}[r].c, sizeof {n}[r].c); }}")
        elif a.layout == "member":
            st = f"{n}_h"
            u.globals.append(f"struct {st} {{ long n; {e} *v; }};")
            self.alloc(n, f"struct {st} *{n}", f"sizeof(struct {st})")
            self.setup.append(f"{n}->n = {a.dims[0]}; {n}->v = galloc({a.dims[0]} * "
                              f"sizeof({e})); {u.fill(e)}({n}->v, {a.dims[0]}u, "
                              f"{self.next_seed()}u);")
            self.hash.append(f"hmix({n}->v, {a.dims[0]} * sizeof({e}));")
            self.free.insert(0, f"gfree({n}->v, {a.dims[0]} * sizeof({e}));")
        elif a.layout == "mrows":
            st = f"{n}_h"
            d0, d1 = a.dims
            u.globals.append(f"struct {st} {{ long rows; {e} **r; }};")
            self.alloc(n, f"struct {st} *{n}", f"sizeof(struct {st})")
            self.setup.append(f"{n}->rows = {d0}; {n}->r = galloc({d0} * sizeof({e} *));")
            self.free.insert(0, f"gfree({n}->r, {d0} * sizeof({e} *));")
            self.row_arrays(f"{n}->r", d0, str(d1), e)
        else:
            raise AssertionError(a.layout)

    def emit(self, nest: list[str], extra_params: list[str] | None = None,
             results: bool = True, threaded: bool = False, hashes: list[str] | None = None,
             pre: list[str] | None = None) -> None:
        """The nest function (or inline block) and the test function around it.

        nest: lines using the scalars and arrays by name, accumulating into accd and acci.
        """
        p, u = self.p, self.u
        # Markers: Program.nest_lines finds each kernel's nest by them.
        nest = [f"/* nest k{self.kid} */", *nest, f"/* end k{self.kid} */"]
        acc = ["double accd = 0;", "unsigned long acci = 0;"] if results else []
        store = ["*rd = accd;", "*ri = acci;"] if results else []
        res_params = ["double *rd", "unsigned long *ri"] if results else []
        t: list[str] = [f"static void {p}test(void) {{"]
        if results:
            t.append("  double rd = 0; unsigned long ri = 0;")
        if self.mode == "global":
            for name, _v in self.scalars:
                u.globals.append(f"static long {name};")
            for _name, decl in self.decls:
                u.globals.append(f"static {decl};")
            for name, v in self.scalars:
                t.append(f"  {name} = opaque({v});")
        else:
            for name, v in self.scalars:
                t.append(f"  long {name} = opaque({v});")
            for _name, decl in self.decls:
                t.append(f"  {decl.replace('const ', '')};")
        t += ["  " + s for s in pre or []]
        t += ["  " + s for s in self.setup]
        if threaded:
            body = ["  " + s for s in acc + nest + store]
            u.functions.append("\n".join(
                [f"static void {p}nest(long t_lo, long t_hi, double *rd, unsigned long *ri) {{",
                 *body, "}",
                 f"static void *{p}thread(void *arg) {{",
                 "  struct fs_part *t = arg;",
                 f"  {p}nest(t->lo, t->hi, &t->rd, &t->ri);", "  return NULL;", "}"]))
            t.append("  struct fs_part part[2];")
            t.append(f"  fs_run2({p}thread, {p}n0, part);")
            t.append("  for (int q = 0; q < 2; q++) { hmix(&part[q].rd, sizeof(double)); "
                     "hmix(&part[q].ri, sizeof(unsigned long)); }")
        elif self.mode == "inline":
            t.append("  {")
            t += ["    " + s for s in acc + nest]
            if results:
                t.append("    rd = accd; ri = acci;")
            t.append("  }")
        else:
            params = ([] if self.mode == "global" else
                      [f"long {n}" for n, _ in self.scalars]
                      + [d for _, d in self.decls + self.stack])
            params += (extra_params or []) + res_params
            args = ([] if self.mode == "global" else
                    [n for n, _ in self.scalars + self.decls + self.stack])
            args += ["&rd", "&ri"] if results else []
            body = ["  " + s for s in acc + nest + store]
            u.functions.append("\n".join(
                [f"static void {p}nest({', '.join(params) or 'void'}) {{", *body, "}"]))
            t.append(f"  {p}nest({', '.join(args)});")
        t += ["  " + s for s in self.hash + (hashes or [])]
        if results:
            t.append("  hmix(&rd, sizeof rd); hmix(&ri, sizeof ri);")
        t += ["  " + s for s in self.free]
        t.append(f"  hout({self.kid});")
        t.append("}")
        u.functions.append("\n".join(t))
        u.tests.append(f"{p}test")


VARS = ["i", "j", "k", "l"]


def jagged_rows(a: Arr, loops: list[Loop]) -> int | None:
    """For A[i + c0][j + c1] under a triangular j <= i: the largest c1 - c0 + 1, so that
    row r needs r + that many elements; None for other references."""
    extra = None
    for sub in a.subs:
        if a.rank != 2 or any(s.rev is not None or len(s.terms) != 1 or s.terms[0][0] != 1
                              for s in sub):
            return None
        (k0, k1) = (sub[0].terms[0][1], sub[1].terms[0][1])
        if k1 != k0 + 1 or not loops[k1].below_outer:
            return None
        x = sub[1].const - sub[0].const + 1
        extra = x if extra is None else max(extra, x)
    return extra


def decorate(rng: random.Random, stmt: str) -> str:
    """The statement with comments or conditional compilation inside, as people write
    them: the hints repeat subscripts and bounds on a single line."""
    r = rng.random()
    lb = stmt.find("[")
    rb = stmt.find("]", lb)
    plus = stmt.find(" + ", lb, rb)
    if r < 0.06 and lb >= 0:
        return stmt[:lb + 1] + "/* at */ " + stmt[lb + 1:]
    if r < 0.1 and plus >= 0:   # a subscript over two lines, a line comment between
        return stmt[:plus] + " + // next\n        " + stmt[plus + 3:]
    if r < 0.14 and not stmt.startswith("if"):
        for op in (" += ", " = "):
            if op in stmt:
                return stmt.replace(op, f"{op}// the value\n      ", 1)
    if r < 0.18:
        return f"#if 1\n{stmt}\n#endif"
    return stmt


def affine_kernel(u: Unit, rng: random.Random, kid: int, threaded: bool) -> None:
    mode = "global" if threaded else rng.choice(["param", "param", "global", "inline"])
    kn = Kernel(u, rng, kid, mode)
    p = kn.p
    D = rng.choice([1, 1, 2, 2, 2, 3, 3, 4])
    total = rng.choice([3000, 20000, 60000, 150000])
    base = total ** (1 / D)
    loops: list[Loop] = []
    # A while or do loop somewhere in a quarter of the nests (its nest is not analysed).
    odd = rng.randrange(D) if rng.random() < 0.25 else -1
    for k in range(D):
        form = rng.choice(["while", "do"]) if k == odd else "for"
        if k > 0 and rng.random() < 0.2:
            o = loops[k - 1]
            loops.append(make_loop(rng, VARS[k], o.ext, o.E, outer=o, form=form))
            continue
        E = max(3, int(base * rng.uniform(0.5, 1.6)))
        ext = kn.scalar(f"{p}n{k}", E)
        part = ("t_lo", "t_hi") if threaded and k == 0 else None
        loops.append(make_loop(rng, VARS[k], ext, E, part=part, form=form))
    inner = loops[-1]

    # Arrays: a base subscript per dimension, then group references around it.
    arrays: list[Arr] = []
    n_written = rng.choice([0, 1, 1, 2])
    for ai in range(rng.randint(2, 4)):
        written = ai < n_written
        elem = rng.choice(ELEM_TYPES)
        rank = rng.choice([1, 1, 2, 2, 3])
        rank = min(rank, D) if rng.random() < 0.85 else min(rank, D + 1)
        dims_loops = rng.sample(range(D), min(rank, D))
        if rng.random() < 0.6:
            dims_loops.sort()
        if threaded and written:   # a thread writes only its own rows
            dims_loops = ([0] + [k for k in dims_loops if k != 0])[:max(rank, 1)]
        base_sub: list[Sub] = []
        for di, k in enumerate(dims_loops):
            if threaded and written and di == 0:
                base_sub.append(Sub(((1, 0),)))
                continue
            r = rng.random()
            if r < 0.1:
                base_sub.append(Sub((), rev=k))
            elif r < 0.15 and D > 1:
                k2 = rng.choice([x for x in range(D) if x != k])
                base_sub.append(Sub(((1, k), (1, k2))))
            else:
                coef = 2 if rng.random() < 0.1 else 1
                base_sub.append(Sub(((coef, k),), rng.choice([0, 0, 0, 1, 2])))
        while len(base_sub) < rank:   # a dimension no loop moves
            base_sub.insert(rng.randrange(1, len(base_sub) + 1) if not (threaded and written)
                            else len(base_sub), Sub((), rng.randint(0, 3)))
        rank = len(base_sub)
        if rank == 1:
            layouts = ["flat"] * 5 + ["static", "aos", "member"] + (
                ["stack"] if mode != "global" else [])
        elif rank == 2:
            layouts = ["lin", "lin", "rows", "rows", "static", "aos2", "mrows"] + (
                ["vla", "vla"] if mode != "global" else [])
        else:
            layouts = ["lin", "static"] + (["vla", "vla"] if mode != "global" else [])
        a = Arr(f"{p}a{ai}", elem, rng.choice(layouts), rank, [tuple(base_sub)], written)
        for _ in range(rng.choice([0, 0, 1, 2])):   # group references: a neighbour
            d = rng.randrange(rank)
            if threaded and written and d == 0:
                continue
            s = base_sub[d]
            if s.rev is not None or not s.terms:
                continue
            delta = rng.choice([-1, 1, 2])
            if s.range(loops)[0] + delta < 0:
                continue
            a.subs.append(tuple(base_sub[:d]) + (Sub(s.terms, s.const + delta),)
                          + tuple(base_sub[d + 1:]))
        arrays.append(a)
    # Sizes: exactly the largest element touched.
    for a in arrays:
        a.dims = [max(sub[d].range(loops)[1] for sub in a.subs) + 1 for d in range(a.rank)]
        if a.layout == "stack" and a.count * 8 > 1 << 16:
            a.layout = "flat"
        if a.layout in ("aos2",) and a.dims[1] > 4096:
            a.layout = "lin"
        if a.layout in ("rows", "mrows") and a.dims[0] > 1500:
            a.layout = "lin"   # a mapping per row: stay far below vm.max_map_count
        jag = jagged_rows(a, loops)
        if a.layout == "rows" and jag is not None:
            # Triangular rows sized to what the nest reads (row r: its j <= i - c0 + c1).
            a.layout, a.row_extra = "jagged", jag
        if a.layout == "static" and a.count > 1 << 21:
            a.layout = "lin" if a.rank > 1 else "flat"

    def refs(pred: Callable[[Arr], bool] = lambda a: True) -> list[tuple[Arr, tuple[Sub, ...]]]:
        return [(a, s) for a in arrays if pred(a) for s in a.subs]

    def rtext(r: tuple[Arr, tuple[Sub, ...]]) -> str:
        return r[0].ref(r[1], loops)

    def ivar(lp: Loop) -> str:
        return f"(long){lp.var}"

    def int_expr(exclude: Arr | None = None) -> str:
        pool = refs(lambda a: not is_fp(a.elem) and a is not exclude)
        terms = [f"(long){rtext(rng.choice(pool))}" for _ in range(rng.randint(1, 2)) if pool]
        if not terms or rng.random() < 0.3:
            terms.append(f"{ivar(rng.choice(loops))} * {rng.randint(1, 5)}")
        if rng.random() < 0.3 and len(terms) > 1:
            terms[1] += f" * {rng.randint(2, 3)}"
        return " + ".join(terms)

    def fp_expr(exclude: Arr | None = None, scale: float = 0.5) -> str:
        # coefficients below 1 in all: values written back stay bounded
        pool = refs(lambda a: a is not exclude)
        picks = [rtext(rng.choice(pool)) for _ in range(rng.randint(1, 2)) if pool]
        if not picks:
            picks = [f"(double){rng.choice(loops).var}"]
        coefs = [scale, scale / 2]
        e = " + ".join(f"{r} * {coefs[n]}" for n, r in enumerate(picks))
        return e + (" + 1.0" if rng.random() < 0.3 else "")

    use_calls = not threaded and rng.random() < 0.3
    stmts: list[str] = []
    for a in arrays:
        if not a.written:
            continue
        tgt = rtext((a, a.subs[0]))
        if is_fp(a.elem):
            if rng.random() < 0.5:
                stmts.append(f"{tgt} = {fp_expr(scale=0.5)};")
            else:
                stmts.append(f"{tgt} += {fp_expr(exclude=a, scale=0.125)};")
        else:
            m = INT_MASK[a.elem]
            if rng.random() < 0.5:
                stmts.append(f"{tgt} = ({a.elem})(({int_expr()}) & {m});")
            else:
                stmts.append(f"{tgt} = ({a.elem})(((long){tgt} + {int_expr(a)}) & {m});")
    for _ in range(rng.choice([0, 1, 1, 2]) if stmts else rng.randint(1, 2)):
        r = rng.random()
        if r < 0.4:
            stmts.append(f"accd += {fp_expr()};")
        elif r < 0.55:
            stmts.append(f"accd = accd * 0.5 + {fp_expr()};")
        elif r < 0.8:
            stmts.append(f"acci += (unsigned long)({int_expr()});")
        else:
            stmts.append(f"acci = acci * 31 + (unsigned long)({int_expr()});")
    if rng.random() < 0.25:   # a conditional statement
        c = rng.choice(refs())
        k = rng.randrange(len(stmts))
        stmts[k] = f"if ({rtext(c)} > 63) {stmts[k]}"
        if rng.random() < 0.5:
            stmts[k] += f" else accd += {fp_expr()};"
    if use_calls:
        kind = rng.choice(["pure", "bump", "note"])
        if kind == "pure":
            f = u.helper(f"{p}f", f"static double {p}f(double x, long v) "
                                  "{ return x * 0.75 + (double)(v & 7); }\n")
            stmts.append(f"accd += {f}({rtext(rng.choice(refs()))}, {ivar(inner)});")
        elif kind == "bump" and any(a.written for a in arrays):
            a = next(a for a in arrays if a.written)
            e = a.elem
            op = ("*q = *q * 0.5f + 1;" if is_fp(e)
                  else f"*q = ({e})((*q + 1) & {INT_MASK[e]});")
            f = u.helper(f"{p}bump", f"static void {p}bump({e} *q) {{ {op} }}\n")
            stmts.append(f"{f}(&{rtext((a, a.subs[-1]))});")
        else:
            u.globals.append(f"static unsigned long {p}count;")
            f = u.helper(f"{p}note", f"static void {p}note(long v) {{ {p}count += "
                                     "(unsigned long)v; }\n")
            stmts.append(f"{f}({ivar(inner)});")
            kn.hash.append(f"hmix(&{p}count, sizeof {p}count);")
    rng.shuffle(stmts)

    # The innermost loop's bound shrunk by the body, directly or by a call.
    pre: list[str] = []
    shrink = (not threaded and inner.form != "countdown" and inner.up
              and inner.cond == f"{inner.var} < {inner.ext}" and rng.random() < 0.15)
    if shrink:
        x = rng.randint(inner.lo, inner.hi)
        if mode != "global" and rng.random() < 0.5:
            lim = f"{p}lim"
            pre.append(f"long {lim} = {inner.ext};")
            stmts.append(f"if ({inner.var} == {x}) {lim}--;")
        else:
            lim = f"{p}glim"
            u.globals.append(f"static long {lim};")
            f = u.helper(f"{p}shrink", f"static void {p}shrink(void) {{ if ({lim} > 1) "
                                       f"{lim}--; }}\n")
            pre.append(f"{lim} = {inner.ext};")
            stmts.append(f"if ({inner.var} == {x}) {f}();")
        inner.cond = f"{inner.var} < {lim}"
    elif (not threaded and inner.form != "countdown" and inner.up
          and inner.cond == f"{inner.var} < {inner.ext}" and rng.random() < 0.1):
        # a bound evaluated once more (by a hint) would show in the count
        u.globals.append(f"static unsigned long {p}calls;")
        f = u.helper(f"{p}bound", f"static long {p}bound(long n) {{ {p}calls++; return n; }}\n")
        inner.cond = f"{inner.var} < {f}({inner.ext})"
        kn.hash.append(f"hmix(&{p}calls, sizeof {p}calls);")

    # Early exits from the innermost loop.
    goto = False
    r = rng.random()
    if r < 0.12:
        stmts.append(f"if ({inner.var} == {rng.randint(inner.lo, inner.hi)}) break;")
    elif r < 0.2:
        ints = refs(lambda a: not is_fp(a.elem))
        if ints:
            stmts.insert(0, f"if ({rtext(rng.choice(ints))} == 1000) break;")
    elif r < 0.3 and inner.continue_ok:
        stmts.insert(0, f"if (({inner.var} & 3) == 1) continue;")
    elif r < 0.34 and not threaded:
        stmts.append(f"if ({inner.var} == {rng.randint(inner.lo, inner.hi)} && "
                     f"{loops[0].var} == {loops[0].hi}) goto {p}out;")
        goto = True

    # The innermost body, perhaps from a macro.
    body = [decorate(rng, st) for st in stmts]
    single = len(stmts) == 1
    if rng.random() < 0.12:
        args = ", ".join(lp.var for lp in loops)
        macro = f"{p}BODY"
        has_jump = any("break" in s or "continue" in s or "goto" in s for s in stmts)
        style = rng.choice(["single", "brace", "dowhile"]) if len(stmts) > 1 else "single"
        if style == "dowhile" and has_jump:
            style = "brace"
        if style == "single" and len(stmts) == 1:
            u.globals.append(f"#define {macro}({args}) {stmts[0].rstrip(';')}")
            body = [f"{macro}({args});"]
        elif style == "brace" or (style == "single" and len(stmts) > 1):
            u.globals.append(f"#define {macro}({args}) {{ {' '.join(stmts)} }}")
            body = [f"{macro}({args})"]
            single = True
        else:
            u.globals.append(f"#define {macro}({args}) do {{ {' '.join(stmts)} }} while (0)")
            body = [f"{macro}({args});"]
            single = True
    lines = inner.wrap(body, single, rng)
    lead: list[str] = []   # statements before the innermost loop, in its parent's body

    # Outer loops, with a per-row accumulator and an exit in the outermost.
    row_arr: Arr | None = None
    if D > 1 and rng.random() < 0.35:
        off = 0 if threaded else rng.choice([0, 0, 1])
        row_arr = Arr(f"{p}w", rng.choice(FP_TYPES), "flat", 1, [(Sub(((1, 0),), off),)],
                      True)
        row_arr.dims = [loops[0].hi + off + 1]
        lines = [l.replace("accd +=", "rowacc +=", 1) for l in lines]   # noqa: E741
        if not any("rowacc" in l for l in lines):   # noqa: E741
            lead = [f"rowacc += {D};"]
    for k in range(D - 2, -1, -1):
        lp = loops[k]
        extra_top: list[str] = []
        extra_end: list[str] = []
        if k == 0 and row_arr is not None:
            extra_top.append("double rowacc = 0;")
            extra_end.append(f"{row_arr.ref(row_arr.subs[0], loops)} = rowacc * 0.5;")
            extra_end.append("accd += rowacc;")
        rows = [a for a in arrays if a.layout == "rows"]
        if k == 0 and rows and not threaded and rng.random() < 0.3:
            # row pointers swapped between runs of the inner loops
            a = rng.choice(rows)
            v = f"(long){lp.var}"
            extra_end.append(f"if ({v} + 1 < {a.dims[0]}) {{ {a.elem} *t = {a.name}[{v}]; "
                             f"{a.name}[{v}] = {a.name}[{v} + 1]; {a.name}[{v} + 1] = t; }}")
        if k == 0 and rng.random() < 0.15:
            extra_end.append(f"if ({lp.var} == {rng.randint(lp.lo, lp.hi)}) break;")
        if k == D - 2:
            extra_top += lead
        body = extra_top + lines + extra_end
        lines = lp.wrap(body, not extra_top and not extra_end, rng)
    if row_arr is not None:
        arrays.append(row_arr)
    if goto:
        lines.append(f"{p}out: ;")

    for a in arrays:
        kn.array(a)
    u.kinds.append(f"affine{D}" + ("-threads" if threaded else ""))
    kn.emit(pre + lines, threaded=threaded)


def affine_threaded(u: Unit, rng: random.Random, kid: int) -> None:
    affine_kernel(u, rng, kid, threaded=True)


def affine(u: Unit, rng: random.Random, kid: int) -> None:
    affine_kernel(u, rng, kid, threaded=False)


# ---------------------------------------------------------------------------------------
# Indirect references

IDX_TYPES = {"int": "0x3fffffff", "long": "(1L << 40)", "unsigned": "0xfffffff0u",
             "size_t": "((size_t)-16)", "short": "32000", "unsigned short": "65000"}


def idx_type(rng: random.Random, target_len: int) -> str:
    choices = ["int", "int", "long", "unsigned", "size_t"]
    if target_len < 30000:
        choices += ["short", "unsigned short"]
    return rng.choice(choices)


def indirect(u: Unit, rng: random.Random, kid: int) -> None:
    kn = Kernel(u, rng, kid, rng.choice(["param", "param", "global", "inline"]))
    p = kn.p
    variant = rng.choice(["gather", "gather", "scatter", "ahead", "table", "table_ahead",
                          "bucket", "rows"])
    u.kinds.append(f"indirect-{variant}")
    if variant == "bucket":
        return bucket(kn)
    if variant == "rows":
        return gather_rows(kn)
    E = rng.choice([500, 4000, 30000, 120000])
    n = kn.scalar(f"{p}n", E)
    nx = rng.choice([300, 5000, 40000, 200000])
    ahead = variant in ("ahead", "table_ahead")
    lp = (make_loop(rng, "i", n, E, simple=True) if ahead or rng.random() < 0.6
          else make_loop(rng, "i", n, E))
    blen = lp.hi + 1 + rng.choice([0, 0, 0, 3])
    nt = nx
    if variant.startswith("table"):
        nc = rng.choice([7, 37, 256])   # the small table c, of a size the source fixes
        bvals = nc
    else:
        bvals = nx
    it = idx_type(rng, bvals)
    P, Q = rng.randrange(1, 100000) | 1, rng.randrange(1000)
    xe = rng.choice(ELEM_TYPES)
    b, x, w = f"{p}b", f"{p}x", f"{p}w"
    kn.flat_array(b, it, blen, fill=False, const=not ahead)
    kn.flat_array(x, xe, nt, const=variant != "scatter")
    we = rng.choice(FP_TYPES)
    kn.flat_array(w, we, blen, const=True)
    # Index values: far out of range everywhere, valid where the loop (the same header)
    # reads them; with a rewrite ahead, valid only at the first index.
    val = f"({it})(((long){lp.var} * {P} + {Q}) % {bvals})"
    fill = [f"for (long q = 0; q < {blen}; q++) {b}[q] = {IDX_TYPES[it]};"]
    if ahead:
        fill.append(f"{b}[{lp.lo}] = ({it})({(lp.lo * P + Q) % bvals});")
    else:
        fill += lp.wrap([f"{b}[{lp.var}] = {val};"], True, rng)
    kn.setup += fill
    if variant.startswith("table"):
        c = f"{p}c"
        where = rng.choice(["static", "local"])
        cinit = (f"for (int q = 0; q < {nc}; q++) {c}[q] = (q * {rng.randrange(1, 9999)} + 1) "
                 f"% {nt};")
        tgt = f"{x}[{c}[{b}[i]]]"
    elif rng.random() < 0.15:   # the index read by a call: never to be made ahead
        u.globals.append(f"static unsigned long {p}calls;")
        f = u.helper(f"{p}at", f"static long {p}at(const {it} *q, long i) {{ {p}calls++; "
                               "return (long)q[i]; }\n")
        tgt = f"{x}[{f}({b}, (long)i)]"
        kn.hash.append(f"hmix(&{p}calls, sizeof {p}calls);")
    else:
        tgt = f"{x}[{b}[i]]"
    fp = is_fp(xe)
    stmts: list[str] = []
    if variant == "scatter":
        if fp:
            stmts.append(f"{tgt} += {w}[i] * 0.125;")
        else:
            stmts.append(f"{tgt} = ({xe})(((long){tgt} + (long)i) & {INT_MASK[xe]});")
    elif fp:
        stmts.append(rng.choice([f"accd += {tgt} * {w}[i];", f"accd += {tgt};",
                                 f"accd = accd * 0.5 + {tgt};"]))
    else:
        stmts.append(rng.choice([f"acci += (unsigned long){tgt};",
                                 f"acci = acci * 31 + (unsigned long){tgt};",
                                 f"accd += {tgt} * {w}[i];"]))
    if ahead:
        stmts.append(f"if (i + 1 < {n}) {b}[i + 1] = ({it})(((long)(i + 1) * {P} + {Q}) % "
                     f"{bvals});")
    r = rng.random()
    if r < 0.1:
        stmts.append(f"if (i == {rng.randint(lp.lo, lp.hi)}) break;")
    elif r < 0.2:
        f = u.helper(f"{p}f", f"static double {p}f(double v) {{ return v * 0.5 + 1; }}\n")
        stmts.append(f"accd += {f}({w}[i]);")
    body = lp.wrap(stmts, len(stmts) == 1, rng)
    if variant.startswith("table"):
        if where == "static":
            u.globals.append(f"static long {c}[{nc}];")
            kn.setup.append(cinit)
        else:
            body = [f"long {c}[{nc}];", cinit, *body]
        if where == "static":
            kn.hash.append(f"hmix({c}, sizeof {c});")
    if rng.random() < 0.3:   # the same gather again, inside an outer loop
        reps = rng.randint(2, 3)
        body = [f"for (int rep = 0; rep < {reps}; rep++) {{", *["  " + s for s in body], "}"]
    kn.emit(body)


def bucket(kn: Kernel) -> None:
    """A counting sort: out[pos[key[i]]++] = i through a table of a size the source fixes."""
    rng, p = kn.rng, kn.p
    E = rng.choice([300, 5000, 40000, 150000])
    n = kn.scalar(f"{p}n", E)
    nb = rng.choice([7, 37, 100, 1000])
    kt = rng.choice(["int", "unsigned", "long", "short"])
    key, out = f"{p}key", f"{p}out"
    kn.flat_array(key, kt, E, fill=False)
    ot = rng.choice(["int", "long", "unsigned"])
    kn.flat_array(out, ot, E, fill=False)
    P = rng.randrange(1, 1000) | 1
    ahead = rng.random() < 0.4
    pos, cnt = f"{p}pos", f"{p}cnt"
    lines = [f"long {pos}[{nb}], {cnt}[{nb}];",
             f"for (int q = 0; q < {nb}; q++) {cnt}[q] = 0;",
             f"for (long i = 0; i < {n}; i++) {cnt}[(i * {P}L) % {nb}]++;",
             f"{pos}[0] = 0;",
             f"for (int q = 1; q < {nb}; q++) {pos}[q] = {pos}[q - 1] + {cnt}[q - 1];"]
    if ahead:   # keys outside the table until rewritten just before they are read
        lines += [f"for (long i = 0; i < {n}; i++) {key}[i] = ({kt})(30000 + (i & 1023));",
                  f"{key}[0] = 0;"]
    else:
        lines.append(f"for (long i = 0; i < {n}; i++) {key}[i] = ({kt})((i * {P}L) % {nb});")
    lp = make_loop(rng, "i", n, E, simple=True)
    lp.lo, lp.init = 0, "0"
    pre = rng.random() < 0.4
    if pre:   # the same fill with a pre-increment
        lines.append(f"for (int q = 0; q < {nb}; q++) {pos}[q] -= 1;")
        st = [f"{out}[++{pos}[{key}[i]]] = ({ot})i;"]
    else:
        st = [f"{out}[{pos}[{key}[i]]++] = ({ot})i;"]
    if ahead:
        st.append(f"if (i + 1 < {n}) {key}[i + 1] = ({kt})(((i + 1) * {P}L) % {nb});")
    lines += lp.wrap(st, len(st) == 1, rng)
    lines.append(f"for (int q = 0; q < {nb}; q++) acci = acci * 31 + (unsigned long){pos}[q];")
    kn.emit(lines)


def gather_rows(kn: Kernel) -> None:
    """Rows picked through an index: A[b[i]][j], b[i*m + j] and rows of indices."""
    rng, p = kn.rng, kn.p
    E0 = rng.choice([50, 300, 1000])
    E1 = rng.choice([7, 64, 500])
    n = kn.scalar(f"{p}n", E0)
    m = kn.scalar(f"{p}m", E1)
    rows = rng.choice([20, 200, 2000])
    e = rng.choice(FP_TYPES)
    b, A, x = f"{p}b", f"{p}A", f"{p}x"
    shape = rng.choice(["rowgather_lin", "rowgather_rows", "lin_index", "index_rows"])
    P, Q = rng.randrange(1, 10000) | 1, rng.randrange(100)
    li = make_loop(rng, "i", n, E0, simple=True)
    lj = make_loop(rng, "j", m, E1, simple=rng.random() < 0.7)
    if shape.startswith("rowgather"):
        kn.flat_array(b, "int", E0, fill=False)
        kn.setup.append(f"for (long q = 0; q < {E0}; q++) {b}[q] = (int)((q * {P} + {Q}) % "
                        f"{rows});")
        if shape == "rowgather_lin":
            kn.flat_array(A, e, rows * E1)
            ref = f"{A}[(long){b}[i] * {m} + j]"
        else:
            kn.alloc(A, f"{e} **{A}", f"{rows} * sizeof({e} *)")
            kn.row_arrays(A, rows, str(E1), e)
            ref = f"{A}[{b}[i]][j]"
    else:
        nx = rng.choice([1000, 50000])
        kn.flat_array(x, e, nx)
        if shape == "lin_index":
            kn.flat_array(b, "int", E0 * E1, fill=False)
            kn.setup.append(f"for (long q = 0; q < {E0 * E1}; q++) {b}[q] = (int)((q * {P} + "
                            f"{Q}) % {nx});")
            ref = f"{x}[{b}[i * {m} + j]]"
        else:
            kn.alloc(b, f"int **{b}", f"{E0} * sizeof(int *)")
            kn.row_arrays(b, E0, str(E1), "int", init=f"for (long q = 0; q < {E1}; q++) "
                          f"{b}[r][q] = (int)(((r * {E1} + q) * {P} + {Q}) % {nx});")
            ref = f"{x}[{b}[i][j]]"
    inner = lj.wrap([rng.choice([f"accd += {ref};", f"accd = accd * 0.5 + {ref};"])], True,
                    rng)
    kn.emit(li.wrap(inner, True, rng))


# ---------------------------------------------------------------------------------------
# Rows of a compressed sparse row matrix


def csr(u: Unit, rng: random.Random, kid: int) -> None:
    kn = Kernel(u, rng, kid, rng.choice(["param", "param", "global", "inline"]))
    p = kn.p
    variant = rng.choice(["plain", "plain", "offset", "subrange", "nonmono", "early", "store",
                          "call"])
    u.kinds.append(f"csr-{variant}")
    E = rng.choice([100, 2000, 20000])
    rt = rng.choice(["int", "long"])
    ct = rng.choice(["int", "unsigned", "long"])
    nx = rng.choice([500, 20000, 150000])
    rp, col, val, x, y = (f"{p}{s}" for s in ("rp", "col", "val", "x", "y"))
    kn.flat_array(rp, rt, E + 1, fill=False, const=variant != "store")
    kn.flat_array(x, "double", nx, const=True)
    kn.flat_array(y, "double", E)
    P, Q, C = rng.randrange(1, 1000), rng.randrange(1, 50), rng.randint(2, 14)
    kn.setup += [
        f"{rp}[0] = 0;",
        f"for (long q = 0; q < {E}; q++) {rp}[q + 1] = {rp}[q] + ({rt})((q % {Q + 2} == 1) ? 0"
        f" : (q * {P}) % {C} + 1);"]
    if variant == "nonmono":   # later rows start before earlier ones end; some invert
        kn.setup.append(f"for (long q = 1; q < {E}; q += 5) {rp}[q] = {rp}[q + 1] / 2;")
    # col and val are sized by the last row's end: exactly the elements the rows read
    nnz = f"(size_t){rp}[{E}]"
    kn.decls.append((col, f"{ct} *{col}"))
    kn.decls.append((val, f"double *{val}"))
    kn.setup += [f"{col} = galloc({nnz} * sizeof({ct}));",
                 f"{val} = galloc({nnz} * sizeof(double));",
                 f"for (size_t q = 0; q < {nnz}; q++) {{ {col}[q] = ({ct})((q * 7919 + {P}) % "
                 f"{nx}); {val}[q] = (double)(q % 17) * 0.25; }}"]
    kn.hash += [f"hmix({col}, {nnz} * sizeof({ct}));",
                f"hmix({val}, {nnz} * sizeof(double));"]
    kn.free = [f"gfree({col}, {nnz} * sizeof({ct}));",
               f"gfree({val}, {nnz} * sizeof(double));"] + kn.free
    lo, hi = 0, E
    if variant == "offset":
        lo, hi = 1, E + 1
    elif variant == "subrange":
        lo = rng.randrange(E)
        hi = rng.randint(lo, E)
    r0, r1 = ("i - 1", "i") if variant == "offset" else ("i", "i + 1")
    ref = rng.choice([f"{x}[{col}[k]]", f"{val}[k] * {x}[{col}[k]]"])
    inner = [f"s += {ref};"]
    if variant == "early":
        inner.append("if (s > 1e6) break;" if rng.random() < 0.5 else f"if (k == {P}) break;")
    if variant == "call":
        f = u.helper(f"{p}f", f"static double {p}f(double v) {{ return v * 0.5; }}\n")
        inner.append(f"s += {f}({val}[k]);")
    if rng.random() < 0.7:
        kl = [f"for (long k = {rp}[{r0}]; k < {rp}[{r1}]; k++)" + (" {" if len(inner) > 1
                                                                 else ""),
              *["  " + s for s in inner]] + (["}"] if len(inner) > 1 else [])
    else:
        kl = [f"long k = {rp}[{r0}];", f"while (k < {rp}[{r1}]) {{", *["  " + s for s in inner],
              "  k++;", "}"]
    row = ["double s = 0;", *kl, f"{y}[{r0}] = s;", "accd += s;"]
    if variant == "store":   # a store of the row pointers' type: the rows may change
        row.append(f"{rp}[i] = {rp}[i];")
    lo_s = kn.scalar(f"{p}lo", lo)
    hi_s = kn.scalar(f"{p}hi", hi)
    if rng.random() < 0.8:
        lines = [f"for (long i = {lo_s}; i < {hi_s}; i++) {{", *["  " + s for s in row], "}"]
    else:
        lines = [f"for (long i = {hi_s} - 1; i >= {lo_s}; i--) {{", *["  " + s for s in row],
                 "}"]
    kn.emit(lines)


# ---------------------------------------------------------------------------------------
# Pointer walks


def walks(u: Unit, rng: random.Random, kid: int) -> None:
    kn = Kernel(u, rng, kid, rng.choice(["param", "param", "global", "inline"]))
    p = kn.p
    chosen = rng.sample(["fwd", "ne", "stride", "back", "pair", "write", "struct", "rows",
                         "inrow", "while"], rng.randint(2, 4))
    u.kinds.append("walk-" + "+".join(chosen))
    lines: list[str] = []
    for wi, w in enumerate(chosen):
        E = rng.choice([100, 3000, 50000, 200000])
        e = rng.choice(ELEM_TYPES)
        a = f"{p}a{wi}"
        n = kn.scalar(f"{p}n{wi}", E)
        fp = is_fp(e)
        acc = "accd += *q;" if fp else "acci = acci * 3 + (unsigned long)*q;"
        pt = f"{e} *"
        if w in ("fwd", "ne", "stride", "back", "pair", "write", "while"):
            kn.flat_array(a, e, n, const=w != "write")
            ct = "const " if w != "write" else ""
        if w == "fwd":
            lines.append(f"for ({ct}{pt}q = {a}; q < {a} + {n}; q++) {acc}")
        elif w == "ne":
            lines += [f"{ct}{pt}{a}_end = {a} + {n};",
                      f"for ({ct}{pt}q = {a}; q != {a}_end; ++q) {acc}"]
        elif w == "stride":
            s = rng.choice([2, 3])
            lines.append(f"for ({ct}{pt}q = {a}; q < {a} + ({n} - {s - 1}); q += {s}) "
                         f"accd += q[0] * 0.5 + q[{s - 1}];")
        elif w == "back":
            if rng.random() < 0.5:
                lines.append(f"for ({ct}{pt}q = {a} + {n}; q > {a};) accd += *--q;")
            else:
                lines.append(f"for ({ct}{pt}q = {a} + {n}; q > {a};) {{ q--; "
                             f"{acc.replace('*q', 'q[0]')} }}")
        elif w == "pair":
            lines.append(f"for ({ct}{pt}q = {a}; q + 1 < {a} + {n}; q++) accd += *(q + 1) * 0.5 "
                         "+ *q;")
        elif w == "write":
            upd = (f"*q = *q * ({e})0.5 + ({e})1;" if fp
                   else f"*q = ({e})((*q * 3 + 1) & {INT_MASK[e]});")
            lines.append(f"for ({pt}q = {a} + {rng.choice([0, 1])}; q < {a} + {n}; q++) {upd}")
        elif w == "while":
            lines += ["{", f"  {ct}{pt}q = {a};", f"  while (q < {a} + {n}) {{ {acc} q++; }}",
                      "}"]
        elif w == "struct":
            st = f"{a}_s"
            u.globals.append(f"struct {st} {{ double x; double y; int tag; }};")
            kn.alloc(a, f"struct {st} *{a}", f"(size_t){n} * sizeof(struct {st})")
            kn.setup.append(f"for (long r = 0; r < {n}; r++) {{ {a}[r].x = (double)(r % 97); "
                            f"{a}[r].y = 0; {a}[r].tag = (int)(r % 5); }}")
            kn.hash.append(f"for (long r = 0; r < {n}; r++) {{ hmix(&{a}[r].x, sizeof(double));"
                           f" hmix(&{a}[r].y, sizeof(double)); hmix(&{a}[r].tag, "
                           "sizeof(int)); }")
            lines.append(f"for (struct {st} *q = {a}; q < {a} + {n}; q++) {{ q->y += q->x * 0.5;"
                         " acci += (unsigned long)q->tag; }")
        elif w in ("rows", "inrow"):
            cols = rng.choice([16, 300, 2000])
            rows = max(1, E // cols)
            nr = kn.scalar(f"{p}r{wi}", rows)
            nc = kn.scalar(f"{p}c{wi}", cols)
            kn.flat_array(a, e, rows * cols, const=True)
            if w == "rows":
                R = f"{a}_R"
                kn.alloc(R, f"{e} **{R}", f"(size_t){rows} * sizeof({e} *)")
                kn.setup.append(f"for (long r = 0; r < {rows}; r++) {R}[r] = ({e} *){a} + r * "
                                f"{cols};")
                lines.append(f"for ({e} **rq = {R}; rq < {R} + {nr}; rq++)")
                lines.append(f"  for (const {e} *q = *rq; q < *rq + {nc}; q++) {acc}")
            else:
                lines.append(f"for (long r = 0; r < {nr}; r++)")
                lines.append(f"  for (const {e} *q = &{a}[r * {nc}]; q < &{a}[r * {nc}] + {nc};"
                             f" q++) {acc}")
    kn.emit(lines)


# ---------------------------------------------------------------------------------------
# Struct members


def members(u: Unit, rng: random.Random, kid: int) -> None:
    kn = Kernel(u, rng, kid, rng.choice(["param", "global", "inline"]))
    p = kn.p
    chosen = rng.sample(["vec", "chain", "grid", "repoint", "flex", "bag", "null"],
                        rng.randint(1, 3))
    u.kinds.append("member-" + "+".join(chosen))
    lines: list[str] = []
    for wi, w in enumerate(chosen):
        e = rng.choice(FP_TYPES + ("int", "long"))
        fp = is_fp(e)
        acc = (lambda r: f"accd += {r};") if fp else (
            lambda r: f"acci = acci * 7 + (unsigned long){r};")
        s = f"{p}s{wi}"
        E = rng.choice([200, 5000, 60000])
        step = rng.choice([1, 1, 1, 2, 5])
        if w in ("vec", "chain", "repoint"):
            st = f"{s}_v"
            u.globals.append(f"struct {st} {{ long n; {e} *v; {e} *w; }};")
            kn.alloc(s, f"struct {st} *{s}", f"sizeof(struct {st})")
            kn.setup += [f"{s}->n = {E}; {s}->v = galloc({E} * sizeof({e})); {s}->w = galloc("
                         f"{E} * sizeof({e}));",
                         f"{u.fill(e)}({s}->v, {E}u, {kn.next_seed()}u); {u.fill(e)}({s}->w, "
                         f"{E}u, {kn.next_seed()}u);"]
            kn.hash.append(f"hmix({s}->v, {E} * sizeof({e})); hmix({s}->w, {E} * sizeof({e}));")
            kn.free.insert(0, f"gfree({s}->v, {E} * sizeof({e})); gfree({s}->w, {E} * "
                              f"sizeof({e}));")
            base = s
            if w == "chain":
                g = f"{p}g{wi}"
                u.globals.append(f"struct {g}_c {{ int tag; struct {st} *g; }};")
                kn.alloc(g, f"struct {g}_c *{g}", f"sizeof(struct {g}_c)")
                kn.setup.append(f"{g}->g = {s};")
                base = f"{g}->g"
            inc = "i++" if step == 1 else f"i += {step}"
            body = [acc(f"{base}->v[i]")]
            if w == "repoint":
                body.append(f"if (i == {rng.randrange(E)}) {s}->v = {s}->w;")
            elif rng.random() < 0.5:
                upd = (f"{base}->w[i] = {base}->v[i] * 0.5;" if fp
                       else f"{base}->w[i] = ({e})(({base}->v[i] + 1) & 1023);")
                body.append(upd)
            lines += [f"for (long i = 0; i < {base}->n; {inc}) {{", *["  " + b for b in body],
                      "}"]
            if w == "repoint":
                kn.setup.append(f"{e} *{s}_v0 = {s}->v;")
                kn.hash.insert(0, f"{s}->v = {s}_v0;")
        elif w == "grid":
            st = f"{s}_g"
            nr, nc = rng.choice([(40, 3000), (300, 200), (2000, 20)])
            u.globals.append(f"struct {st} {{ long n, m; {e} **rows; }};")
            kn.alloc(s, f"struct {st} *{s}", f"sizeof(struct {st})")
            kn.setup.append(f"{s}->n = {nr}; {s}->m = {nc}; {s}->rows = galloc({nr} * "
                            f"sizeof({e} *));")
            kn.free.insert(0, f"gfree({s}->rows, {nr} * sizeof({e} *));")
            kn.row_arrays(f"{s}->rows", nr, str(nc), e)
            inc = "j++" if step == 1 else f"j += {step}"
            if rng.random() < 0.3:
                # the column bound, a member, changed by the nest within the rows' length
                m0, m1 = rng.randint(1, nc), rng.randint(1, nc)
                kn.setup.append(f"{s}->m = {m0};")
                lines += [f"for (long i = 0; i < {s}->n; i++) {{",
                          f"  for (long j = 0; j < {s}->m; {inc}) {acc(f'{s}->rows[i][j]')}",
                          f"  if (i == {rng.randrange(nr)}) {s}->m = {m1};", "}"]
            elif rng.random() < 0.7:
                lines += [f"for (long i = 0; i < {s}->n; i++)",
                          f"  for (long j = 0; j < {s}->m; {inc}) {acc(f'{s}->rows[i][j]')}"]
            else:   # down a column
                lines += [f"for (long j = 0; j < {s}->m; {inc})",
                          f"  for (long i = 0; i < {s}->n; i++) {acc(f'{s}->rows[i][j]')}"]
        elif w == "flex":
            st = f"{s}_f"
            u.globals.append(f"struct {st} {{ size_t n; {e} d[]; }};")
            size = f"offsetof(struct {st}, d) + {E} * sizeof({e})"
            kn.alloc(s, f"struct {st} *{s}", size)
            kn.setup.append(f"{s}->n = {E}; {u.fill(e)}({s}->d, {E}u, {kn.next_seed()}u);")
            kn.hash.append(f"hmix({s}->d, {E} * sizeof({e}));")
            inc = "i++" if step == 1 else f"i += {step}"
            lines.append(f"for (size_t i = 0; i < {s}->n; {inc}) {acc(f'{s}->d[i]')}")
        elif w == "null":
            # Bases that are NULL where their loops never run: nothing may load them,
            # not at the nest's entry either.
            st = f"{s}_n"
            u.globals.append(f"struct {st} {{ long n; {e} *v; {e} **rows; }};")
            u.globals.append(f"struct {st}_c {{ struct {st} *g; }};")
            z, ok, m = (kn.scalar(f"{p}z{wi}", 0), kn.scalar(f"{p}ok{wi}", 0),
                        kn.scalar(f"{p}m{wi}", E))
            kn.alloc(s, f"struct {st}_c *{s}", f"sizeof(struct {st}_c)")   # s->g stays NULL
            null = "(uintptr_t)fs_zero"
            lines += ["{", f"  struct {st} *np = (struct {st} *){null};",
                      f"  {e} **nr = ({e} **){null};",
                      f"  for (long i = 0; i < {z}; i++) {acc('np->v[i]')}",
                      f"  for (long i = 0; i < {z}; i++) {acc(f'{s}->g->v[i]')}",
                      f"  for (long i = 0; i < {m}; i += {step}) {{",
                      f"    if ({ok}) for (long j = 0; j < {m}; j++) {acc('np->rows[i][j]')}",
                      "    acci += (unsigned long)i;", "  }",
                      f"  for (long i = 0; i < {z}; i++)",
                      f"    for (long j = 0; j < {m}; j++) {acc('nr[i][j]')}", "}"]
        else:   # bag: an array inside a struct, used up to a member bound
            st = f"{s}_b"
            u.globals.append(f"struct {st} {{ long n; {e} a[{E}]; }};")
            kn.alloc(s, f"struct {st} *{s}", f"sizeof(struct {st})")
            used = rng.choice([E, E - 1, E // 2])
            kn.setup.append(f"{s}->n = opaque({used}); {u.fill(e)}({s}->a, {E}u, "
                            f"{kn.next_seed()}u);")
            kn.hash.append(f"hmix({s}->a, sizeof {s}->a);")
            lines.append(f"for (long i = {rng.choice([0, 1])}; i < {s}->n; i++) "
                         f"{acc(f'{s}->a[i]')}")
    kn.emit(lines)


KINDS: list[tuple[Callable[[Unit, random.Random, int], None], int]] = [
    (affine, 10), (indirect, 4), (csr, 2), (walks, 2), (members, 2)]


@dataclass
class Program:
    seed: int
    threads: bool
    kinds: list[str]           # per kernel, its shape
    source: str

    @property
    def families(self) -> list[str]:
        """Per kernel, its kind without details: affine, affine-threads, indirect, csr,
        walk, member."""
        return [k.split("-")[0].rstrip("0123456789") + ("-threads" if "threads" in k else "")
                for k in self.kinds]

    @property
    def nest_lines(self) -> list[tuple[int, int]]:
        """Per kernel, the first and last line (1-based) of its nest."""
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for n, line in enumerate(self.source.splitlines(), 1):
            m = re.fullmatch(r"\s*/\* (nest|end) k(\d+) \*/", line)
            if m:
                (first if m[1] == "nest" else last)[int(m[2])] = n
        return [(first[k], last[k]) for k in range(len(self.kinds))]


def generate(seed: int, kernels: int = 8, threads: bool = False) -> Program:
    """One program of `kernels` random kernels; with threads, some affine kernels run in
    two pthreads (each over its half of the outer loop)."""
    rng = random.Random(seed)
    u = Unit(seed, threads)
    fns = [f for f, w in KINDS for _ in range(w)]
    for kid in range(kernels):
        if threads and kid % 2 == 0:
            affine_threaded(u, rng, kid)
        else:
            rng.choice(fns)(u, rng, kid)
    return Program(seed, threads, u.kinds, u.text())


def main() -> None:
    ap = argparse.ArgumentParser(description="print a random loop-nest C program")
    ap.add_argument("seed", type=int)
    ap.add_argument("--kernels", type=int, default=8)
    ap.add_argument("--threads", action="store_true")
    a = ap.parse_args()
    print(generate(a.seed, a.kernels, a.threads).source, end="")


if __name__ == "__main__":
    main()
