"""What one function's source text says at a cursor: whether the file's text spells the
code there (not a macro's expansion or an #include'd file), the text to repeat in a hint,
and the byte offsets of a for statement's parts.  Hints repeat the user's text, so only
text that is the code may be repeated."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

import clang.cindex as ci

from foresight.compiler.frontend.cshim import file_offset, lex, spelling_offset
from foresight.compiler.frontend.cursors import children, end_of, preorder, start_of
from foresight.compiler.options import decode_source

K = ci.CursorKind
# Statements whose text ends with their last sub-statement's (text.stmt_end).
_ENDS_WITH_A_SUBSTATEMENT = (K.IF_STMT, K.FOR_STMT, K.WHILE_STMT, K.SWITCH_STMT, K.LABEL_STMT,
                             K.CASE_STMT, K.DEFAULT_STMT)


class Token:
    """A token of the file: its spelling, kind and byte offsets [start, end)."""

    __slots__ = ("spelling", "kind", "start", "end")

    def __init__(self, spelling: str, kind: ci.TokenKind, start: int, end: int):
        self.spelling, self.kind, self.start, self.end = spelling, kind, start, end


class FunctionText:
    """The text of function `fn` in file `main` (bytes `data`), with the file's macro
    expansions (unit.macro_ranges) and __COUNTER__-reading macros (unit.counting_macros)."""

    def __init__(self, fn: ci.Cursor, data: bytes, main: str,
                 macros: list[tuple[int, int]], counting: set[str] | frozenset[str],
                 unrepeatable: Callable[[str], bool] | None = None,
                 line_reading: Callable[[str], bool] | None = None,
                 quoting: Callable[[str], bool] | None = None):
        self.fn, self.data, self.main = fn, data, main
        self.macros = macros
        self.counting = counting    # text holding them is never repeated
        # Names whose text means more when compiled twice (unit.Unrepeatable).
        self.unrepeatable = unrepeatable or {"_Pragma", "__COUNTER__"}.__contains__
        # Names that read __LINE__, themselves or through macros (another value when
        # written again on another line).
        self.line_reading = line_reading or {"__LINE__"}.__contains__
        # Macros that stringize or paste, themselves or through others (unit.Unrepeatable
        # with quotes): None, every macro is taken to.
        self.quoting = quoting
        self._cursors: list[tuple[int, int]] | None = None  # (start, hash), by start
        self._tokens: list[Token] | None = None             # the function's, by start
        self._token_starts: list[int] = []
        self._parents: dict[int, tuple[int, int]] | None = None

    def spelled(self, c: ci.Cursor) -> bool:
        """Whether the file's text at `c`'s extent spells `c`, so hints may repeat it.

        Code a macro's body produces is located at the whole call (`BODY(k)`): the call's
        text spells only the outermost expression the call makes (`u(i,j)` for
        `#define u(i,j) u_[(i)*n+(j)]`), not the parts of it (`A[r][k]` of `#define
        BODY(k) { s += A[r][k]; }`, whose hints would run the body again).  Text
        containing whole calls spells itself, unless it reads __COUNTER__ (repeating it
        would change the values of later uses)."""
        if not self.in_file(c) or self.reads_counter(c):
            return False
        cs, ce = start_of(c), end_of(c)
        lo = bisect_left(self.macros, (cs, -1))
        while lo > 0 and self.macros[lo - 1][1] > cs:
            lo -= 1
        for s, e in self.macros[lo:bisect_left(self.macros, (ce, -1))]:
            if e <= cs or (cs <= s and e <= ce and (cs, ce) != (s, e)) or (s < cs and ce < e):
                continue
            if (cs, ce) != (s, e) or self.parents().get(c.hash) == (s, e):
                return False
        return True

    def macro_argument_call(self, c: ci.Cursor, name: str | None, args: list[ci.Cursor]
                            ) -> tuple[int, int, list[tuple[int, int]]] | None:
        """Where the file spells call `c` of function `name` whole inside a macro call's
        argument (`CHECK(pread(fd, b, n, off))`), which libclang locates at the macro
        call: the byte range of its text and of each argument's, or None.  Only when the
        text is the call as the compiler sees it: its name, its parentheses and as many
        arguments as `args`, each holding the place libclang spells that argument at (an
        argument that is a macro's expansion is not), and no macro around it that
        stringizes or pastes (text put into the argument would change a string the program
        makes)."""
        where, at = spelling_offset(c.location)
        if name is None or where != self.main or self.quoting is None:
            return None
        around = [(s, e) for s, e in self.macros if s < at < e]
        if not around or self.data[at:at + len(name)] != name.encode():
            return None
        end = min(e for _, e in around)
        toks = self._lex(at, end)
        if len(toks) < 3 or toks[0].spelling != name or toks[1].spelling != "(":
            return None
        depth, ranges, first, last, close = 0, [], None, 0, None
        for t in toks[1:]:
            s = t.spelling
            if s in ("(", "[", "{"):
                depth += 1
                if depth == 1:
                    continue
            elif s in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    if first is not None:
                        ranges.append((first, last))
                    close = t.end
                    break
            elif s == "," and depth == 1:
                if first is None:
                    return None
                ranges.append((first, last))
                first = None
                continue
            if first is None:
                first = t.start
            last = t.end
        if close is None or len(ranges) != len(args):
            return None
        for a, (lo, hi) in zip(args, ranges, strict=True):
            w, o = spelling_offset(a.location)
            if w != self.main or not lo <= o < hi:
                return None
        # Every name in the outermost macro call's text (a macro passed by name:
        # `WITH(LOGCALL, pread(...))`), each of its definitions in the unit.
        s0, e0 = min(s for s, _ in around), max(e for _, e in around)
        if any(t.kind == ci.TokenKind.IDENTIFIER and self.quoting(t.spelling)
               for t in self._lex(s0, e0)):
            return None
        return at, close, ranges

    def macro_argument_name(self, c: ci.Cursor, name: str) -> int | None:
        """Where the file spells the name `name` at `c` (a variable's) in a macro call's
        argument, which libclang locates at the macro call; None elsewhere (a macro's
        definition, a pasted token)."""
        where, at = spelling_offset(c.location)
        raw = name.encode()
        if where != self.main or self.data[at:at + len(raw)] != raw or \
                not any(s < at < e for s, e in self.macros):
            return None
        before, after = self.data[at - 1:at], self.data[at + len(raw):at + len(raw) + 1]
        if before.isalnum() or before == b"_" or after.isalnum() or after == b"_":
            return None
        return at

    def in_file(self, c: ci.Cursor) -> bool:
        """Whether `c`'s extent is a non-empty range of this file: code from a macro
        call's arguments has an empty extent at the call (`N` of `COND(i, N)`), code from
        an #include'd file offsets into that file."""
        if end_of(c) <= start_of(c):
            return False
        extent = c.extent
        return file_offset(extent.start)[0] == self.main == file_offset(extent.end)[0]

    def reads_counter(self, c: ci.Cursor) -> bool:
        """Whether the text at `c` (in_file) reads __COUNTER__, itself or through a
        macro."""
        return bool(self.counting) and any(t.spelling in self.counting
                                           for t in self.tokens(c))

    def text(self, c: ci.Cursor) -> str:
        """`c` as C to repeat in a one-line insertion (and to show in the report): its
        tokens as written, one space wherever the source has white space, a comment or a
        line break between two, so a `//` comment or a newline inside never reaches the
        inserted line."""
        start, end = start_of(c), end_of(c)
        out, last = [], None
        for t in self.tokens(c):
            o = t.start
            if last is not None and o > last:
                out.append(" ")
            out.append(t.spelling.replace("\\\n", "").replace("\\\r\n", ""))
            last = t.end
        if not out:
            return decode_source(self.data[start:end])
        return "".join(out)

    def tokens(self, c: ci.Cursor) -> list[Token]:
        """The file's own tokens in `c`'s extent, comments left out (a cursor's
        get_tokens would start at a macro's definition when the expression begins with a
        macro).  The function's text is split into tokens once, on the first ask."""
        start, end = start_of(c), end_of(c)
        if self._tokens is None:
            self._tokens = self._lex(start_of(self.fn), end_of(self.fn))
            self._token_starts = [t.start for t in self._tokens]
        starts = self._token_starts
        if starts and (start < starts[0] or end > self._tokens[-1].end):
            return self._lex(start, end)
        return self._tokens[bisect_left(starts, start):bisect_left(starts, end)]

    def _lex(self, start: int, end: int) -> list[Token]:
        """The tokens of bytes [start, end) of this file, comments left out."""
        return [Token(*t) for t in lex(self.fn.translation_unit, self.data, start, end)]

    def member_op(self, owner: ci.Cursor, member: ci.Cursor) -> str | None:
        """How the source writes member access `member` of `owner`: "->", "." or None
        (text elsewhere, e.g. from a macro)."""
        sep = self.data[end_of(owner):end_of(member)].lstrip()
        return "->" if sep.startswith(b"->") else "." if sep.startswith(b".") else None

    def header_parts(self, c: ci.Cursor) -> tuple[int, int, int, int] | None:
        """Byte offsets of '(' ';' ';' ')' of a for statement, checked against the text."""
        toks = self.tokens(c)
        if len(toks) < 5 or toks[0].spelling != "for" or toks[1].spelling != "(":
            return None
        depth, semis, lparen = 0, [], toks[1].start
        for t in toks[1:]:
            s = t.spelling
            if s in ("(", "[", "{"):
                depth += 1
            elif s in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    if len(semis) != 2:
                        return None
                    rparen = t.start
                    offs = (lparen, semis[0], semis[1], rparen)
                    ok = all(self.data[o:o + 1] in (b"(", b";", b")") for o in offs)
                    return offs if ok else None
            elif s == ";" and depth == 1:
                semis.append(t.start)
        return None

    def stmt_end(self, c: ci.Cursor) -> int | None:
        """Offset just past statement `c`, including the ';' the extent leaves out.

        A statement ends where its last statement does (`if`, `for`, `while`, `switch`,
        labels: their last sub-statement), and that one with its `;` unless it is a
        block: an expression ending in `}` (`v[i] = (struct P){ a[i], 1 };`) still has
        its `;` after the extent."""
        end = end_of(c)
        leaf = c
        while leaf.kind in _ENDS_WITH_A_SUBSTATEMENT:
            subs = children(leaf)
            if not subs or end_of(subs[-1]) != end:
                break
            leaf = subs[-1]
        if leaf.kind == K.COMPOUND_STMT or self.data[end - 1:end] == b";":
            return end
        i = end
        while i < len(self.data) and self.data[i:i + 1] in (b" ", b"\t", b"\n", b"\r"):
            i += 1
        return i + 1 if self.data[i:i + 1] == b";" else None

    def macro_clash(self, c: ci.Cursor, start: int, body: ci.Cursor,
                    body_end: int) -> str | None:
        """Why the loop's text cannot be edited as the compiler sees it, or None.

        Hints are spliced into the text before the loop, at the top of its body and after
        it (wrapping an unbraced body in braces).  That keeps the meaning only if those
        places are in the file's own text, not inside a macro expansion, and if the text
        from `for` to the end of the body holds this loop and nothing else: with
        `#define BUMP(i) A[i] += 1; C[i] += 2`, `for (...) BUMP(k);` loops over the first
        statement only, while the text `BUMP(k);` holds both."""
        lo = bisect_left(self.macros, (start, -1))
        while lo > 0 and self.macros[lo - 1][1] > start:
            lo -= 1
        hi = bisect_left(self.macros, (body_end, -1))
        near = [m for m in self.macros[lo:hi] if m[1] > start]
        if not near:
            return None
        body_start = start_of(body)
        edges = (start, body_start, body_start + 1, body_end) if body.kind == K.COMPOUND_STMT \
            else (start, body_start, body_end)
        if body.kind == K.COMPOUND_STMT and (self.data[body_start:body_start + 1] != b"{"
                                             or self.data[body_end - 1:body_end] != b"}"):
            return "the braces of the loop body come from a macro expansion"
        for s, e in near:
            if any(s < o < e for o in edges) or (body.kind == K.COMPOUND_STMT and any(
                    s <= o < e for o in (body_start, body_end - 1))):
                return (f"the loop is written across a macro expansion (line "
                        f"{c.location.line}): its text is not the code the compiler sees")
        if body.kind == K.COMPOUND_STMT:
            return None
        # An unbraced body touching a macro: every statement the text holds must be the
        # loop's own.
        mine = {d.hash for d in preorder(c)}
        cursors = self.cursors()
        i = bisect_left(cursors, (start, -1))
        while i < len(cursors) and cursors[i][0] < body_end:
            if cursors[i][1] not in mine:
                return ("the loop body comes from a macro that expands to more than the "
                        f"loop's statement (line {c.location.line}): wrapping its text "
                        "would change what the loop runs")
            i += 1
        return None

    def parents(self) -> dict[int, tuple[int, int]]:
        """Cursor hash -> its parent's extent, for the cursors of this function."""
        if self._parents is None:
            self._parents = {}
            stack = [self.fn]
            while stack:
                p = stack.pop()
                ext = (start_of(p), end_of(p))
                for k in children(p):
                    self._parents[k.hash] = ext
                    stack.append(k)
        return self._parents

    def cursors(self) -> list[tuple[int, int]]:
        """(start offset, hash) of every cursor of the function in this file, by offset."""
        if self._cursors is None:
            self._cursors = sorted(
                (start_of(d), d.hash) for d in preorder(self.fn)
                if d.location.file is not None and str(d.location.file) == self.main)
        return self._cursors
