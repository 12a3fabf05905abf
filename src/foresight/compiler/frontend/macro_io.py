"""Macros that make I/O calls, expanded where the file invokes them.

`#define READ_REC(f, b, i) pread((f), (b), REC, (off_t)(i) * REC)`: the call of `pread`
is spelled in the macro's text, not where the program reads, so the prefetch thread's
rewriter has no place in the file to change it.  Here each invocation of such a macro in
the file (`READ_REC(fd, buf, k)`) is replaced by the macro's replacement list with the
invocation's arguments put for its parameters, as the preprocessor does, on the
invocation's first line (its other lines kept as empty lines, so no line number moves).
So are invocations whose arguments make such a call where the macro does more with it
than the slicer can follow (`#define SLURP(c, n) while ((c) == 512) n++`): expanded, it
is code like any other.  The file with these expansions is what the prefetch-thread pass
slices and rewrites when the file as written is refused for a macro
(passes/prefetch_thread.py), and the expansions go into the compiled text with its other
changes.

Only what is certain to mean the same: the expanded file must preprocess (`cc -E`, the
file's own flags) to the same tokens as the original, or nothing is expanded.  Not
expanded: macros that stringize or paste (`#`, `##`), name themselves, or take GNU named
variadic parameters (`args...`); invocations inside another macro's text.  Expansions
that bring further such invocations (a macro whose text invokes another) are expanded in
turn, a few rounds at most.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from foresight.compiler.frontend.cursors import K, end_of, start_of
from foresight.compiler.frontend.unit import load
from foresight.compiler.options import decode_source, encode_source

ROUNDS = 4   # expansions of expansions (a macro whose text invokes another)


@dataclass(frozen=True)
class Expansion:
    start: int      # the invocation's bytes in the file being expanded
    end: int
    text: str       # what replaces them


def expand_io_macros(path: Path | str, clang_args: list[str], data: bytes,
                     names: frozenset[str]) -> tuple[bytes, list[Expansion]] | None:
    """The file's text with every invocation of a macro whose text calls one of `names`
    expanded, and the expansions in the original file's offsets; None when there is none
    or the result would not preprocess to the same tokens."""
    text = data
    rounds: list[list[Expansion]] = []
    for _ in range(ROUNDS):
        tu = load(Path(path), clang_args, hide_openmp=True, text=text)
        found = _expansions(tu, text, str(tu.spelling), names)
        if not found:
            break
        rounds.append(found)
        text = apply(text, found)
    if not rounds or not _same_tokens(path, clang_args, data, text):
        return None
    composed = _compose(data, rounds)
    if composed is None or apply(data, composed) != text:
        return None
    return text, composed


def apply(data: bytes, expansions: list[Expansion]) -> bytes:
    out, pos = [], 0
    for e in expansions:
        out += [data[pos:e.start], encode_source(e.text)]
        pos = e.end
    out.append(data[pos:])
    return b"".join(out)


def _compose(data: bytes, rounds: list[list[Expansion]]) -> list[Expansion] | None:
    """The expansions of several rounds, each in the text the one before made, as
    expansions of the original file: a later round's expansion lies inside an earlier
    one's text (an edit of that text), around whole earlier ones (`CLAMP(READ(x))`, whose
    text holds theirs), or apart from them; None for anything else."""
    current = rounds[0]
    for later in rounds[1:]:
        spans = spans_of(current)

        inside: dict[int, list[Expansion]] = {}
        outer: list[Expansion] = []
        covered: set[int] = set()
        for x in later:
            k = next((k for k, (a, b, _) in enumerate(spans) if a <= x.start and x.end <= b),
                     None)
            if k is not None:
                a = spans[k][0]
                inside.setdefault(k, []).append(Expansion(x.start - a, x.end - a, x.text))
                continue
            held = [k for k, (a, b, _) in enumerate(spans) if x.start <= a and b <= x.end]
            if any(a < x.end and x.start < b for k, (a, b, _) in enumerate(spans)
                   if k not in held):
                return None      # partly over an earlier expansion
            covered.update(held)
            outer.append(Expansion(back_offset(spans, x.start), back_offset(spans, x.end), x.text))
        merged = list(outer)
        for k, (_, _, e) in enumerate(spans):
            if k in covered:
                continue
            if k in inside:
                e = Expansion(e.start, e.end,
                              decode_source(apply(encode_source(e.text), inside[k])))
            merged.append(e)
        current = sorted(merged, key=lambda e: e.start)
    return current


def spans_of(expansions: list[Expansion]) -> list[tuple[int, int, Expansion]]:
    """Where each expansion's text lies, [a, b), in the text they make."""
    out, shift = [], 0
    for e in expansions:
        a = e.start + shift
        n = len(encode_source(e.text))
        out.append((a, a + n, e))
        shift += n - (e.end - e.start)
    return out


def back_offset(spans: list[tuple[int, int, Expansion]], at: int) -> int:
    """Offset `at` of a text the expansions at `spans` made, outside every one of them,
    in the text before them."""
    return at - sum((b - a) - (e.end - e.start) for a, b, e in spans if b <= at)


def _expansions(tu: ci.TranslationUnit, data: bytes, main: str,
                names: frozenset[str]) -> list[Expansion]:
    definitions: dict[str, list[ci.Cursor]] = {}
    invocations, texts = [], []   # texts: the file's own #define lines
    for c in tu.cursor.get_children():
        if c.kind == K.MACRO_DEFINITION:
            definitions.setdefault(c.spelling, []).append(c)
            if c.location.file is not None and str(c.location.file) == main:
                texts.append((start_of(c), end_of(c)))
        elif (c.kind == K.MACRO_INSTANTIATION and c.location.file is not None
              and str(c.location.file) == main):
            invocations.append(c)
    macros: dict[str, _Macro | None] = {}

    def macro(d: ci.Cursor) -> _Macro | None:
        key = f"{d.location.file}:{d.location.offset}"
        if key not in macros:
            macros[key] = _Macro.of(d)
        return macros[key]

    def calls_io(m: _Macro, depth: int = 0) -> bool:
        """Its text calls one of `names`, or invokes a macro (defined once) that does."""
        for i, t in enumerate(m.body):
            if t in names and i + 1 < len(m.body) and m.body[i + 1] == "(":
                return True
            if depth < ROUNDS and t != m.name and len(definitions.get(t, ())) == 1:
                inner = macro(definitions[t][0])
                if inner is not None and calls_io(inner, depth + 1):
                    return True
        return False

    out: list[Expansion] = []
    for c in sorted(invocations, key=start_of):
        d = c.referenced
        if d is None or d.kind != K.MACRO_DEFINITION:
            continue
        m = macro(d)
        s, e = start_of(c), end_of(c)
        if m is None or not (calls_io(m) or _io_in_arguments(tu, c, s, e, names)):
            continue
        if out and s < out[-1].end:
            continue     # inside an invocation already expanded: a later round's
        if any(a <= s < b for a, b in texts):
            continue     # in a macro's own text
        text = m.expand(tu, c, data, s, e)
        if text is not None:
            # (a space each side: `-NEG(x)` with `#define NEG(x) -(x)` is `- -(x)`, never
            # the `--` that pasting the text on would make)
            out.append(Expansion(s, e, f" {text} " + "\n" * data[s:e].count(b"\n")))
    return out


def _io_in_arguments(tu: ci.TranslationUnit, c: ci.Cursor, s: int, e: int,
                     names: frozenset[str]) -> bool:
    """Whether the invocation's arguments call one of `names`."""
    toks = [t.spelling for t in tu.get_tokens(extent=c.extent)
            if s <= t.extent.start.offset and t.extent.end.offset <= e]
    return any(t in names and toks[i + 1] == "(" for i, t in enumerate(toks[1:-1], 1))


@dataclass
class _Macro:
    name: str
    params: list[str] | None     # None: object-like
    variadic: bool
    body: list[str]

    @staticmethod
    def of(d: ci.Cursor) -> _Macro | None:
        toks = list(d.get_tokens())
        if not toks or toks[0].spelling != d.spelling:
            return None
        name = toks[0].spelling
        rest = toks[1:]
        params: list[str] | None = None
        variadic = False
        if rest and rest[0].spelling == "(" and \
                rest[0].extent.start.offset == toks[0].extent.end.offset:
            params = []
            i = 1
            while i < len(rest) and rest[i].spelling != ")":
                t = rest[i].spelling
                if t == "...":
                    variadic = True
                elif t != ",":
                    if i + 1 < len(rest) and rest[i + 1].spelling == "...":
                        return None      # GNU `args...`
                    params.append(t)
                i += 1
            if i >= len(rest):
                return None
            rest = rest[i + 1:]
        body = [t.spelling for t in rest]
        if "#" in body or "##" in body or "%:" in body or name in body \
                or "__VA_OPT__" in body:
            return None
        return _Macro(name, params, variadic, body)

    def expand(self, tu: ci.TranslationUnit, c: ci.Cursor, data: bytes, s: int,
               e: int) -> str | None:
        """The replacement list with this invocation's arguments (their text as written)
        for the parameters; None when the invocation cannot be read so."""
        if self.params is None:
            return " ".join(self.body)
        toks = [t for t in tu.get_tokens(extent=c.extent)
                if s <= t.extent.start.offset and t.extent.end.offset <= e]
        if len(toks) < 3 or toks[0].spelling != self.name or toks[1].spelling != "(" \
                or toks[-1].spelling != ")":
            return None
        args: list[tuple[int, int]] = []      # each argument's bytes
        depth, first = 0, toks[1].extent.end.offset
        for t in toks[2:-1]:
            if t.spelling == "(":
                depth += 1
            elif t.spelling == ")":
                depth -= 1
            elif t.spelling == "," and depth == 0:
                args.append((first, t.extent.start.offset))
                first = t.extent.end.offset
        args.append((first, toks[-1].extent.start.offset))
        texts = [decode_source(data[a:b]).strip() for a, b in args]
        n = len(self.params)
        if texts == [""] and n == 0 and not self.variadic:
            texts = []
        if len(texts) < n or (len(texts) > n and not self.variadic):
            return None
        value = dict(zip(self.params, texts[:n], strict=True))
        if self.variadic:
            rest = args[n:]
            value["__VA_ARGS__"] = (decode_source(data[rest[0][0]:rest[-1][1]]).strip()
                                    if rest else "")
        if any("\n" in v or "//" in v or "/*" in v for v in value.values()):
            # (kept on one line: a comment or a line break in an argument)
            value = {k: re.sub(r"\s+", " ", _no_comments(v)).strip() for k, v in value.items()}
        return " ".join(value.get(t, t) for t in self.body)


def _no_comments(text: str) -> str:
    return re.sub(r'/\*.*?\*/|//[^\n]*|("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')',
                  lambda m: m.group(1) or " ", text, flags=re.S)


def _same_tokens(path: Path | str, clang_args: list[str], before: bytes, after: bytes) -> bool:
    """Whether the C compiler preprocesses `after` to the same tokens as `before`, both as
    the file at `path` (its directory searched first for its quoted includes)."""
    from foresight.driver.compile import underlying_words

    where = str(Path(path).resolve().parent)

    def preprocessed(text: bytes) -> bytes | None:
        try:
            r = subprocess.run([*underlying_words(), "-E", "-P", "-x", "c", "-iquote", where,
                                *clang_args, "-"], input=text, capture_output=True,
                               timeout=60, env=dict(os.environ, LC_ALL="C"))
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        return r.stdout if r.returncode == 0 else None

    a, b = preprocessed(before), preprocessed(after)
    return a is not None and b is not None and _tokens(a) == _tokens(b)


# C's tokens: literals, identifiers, preprocessing numbers, punctuators longest first
# (`- -` and `--` differ; `p.x` and `p . x` do not)
_TOKEN = re.compile(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[A-Za-z_][A-Za-z_0-9]*'
                    rb'|\.?[0-9](?:[eEpP][-+]|[A-Za-z_0-9.])*'
                    rb'|\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|##|\S')


def _tokens(text: bytes) -> list[bytes]:
    return _TOKEN.findall(text)
