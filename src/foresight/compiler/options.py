"""What `foresight cc` assumes at compile time: memory, page and block size, latency model."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class CompileOptions:
    prefetch: bool = True            # False: --no-prefetch, the same pipeline with no hints
    indirect: bool = True            # False: --no-indirect, direct references only (Fig. 18)
    prefetch_thread: bool = False    # --prefetch-thread: the AASFP prefetch thread (issue 24)
    color: bool = False              # --color: page-coloring summaries (CDPC, paper 4)
    sparse_rows: bool = True         # False: --fs-no-sparse-rows, a[b[k]] not across CSR rows
    memory_bytes: int = 64 << 20     # memory the analysis assumes (--fs-mem)
    page_size: int = 4096
    block_size: int = 0              # bytes per block prefetch; 0: the preset's (64K / 16K)
    preset: str = "adaptive"         # "adaptive": distance from the runtime; "paper": Eq. (1)
    latency_cycles: int = 0          # paper preset: I/O latency in cycles; 0: 100,000
    # What the C compiler is told it may assume (driver/args.compile_options): that
    # stores of one type do not change objects of another (C's rule; not with
    # -fno-strict-aliasing), and that a function defined in the file is the one its calls
    # run (not with -fPIC/-fpic, where another definition may interpose).
    strict_aliasing: bool = True
    own_definitions: bool = True
    # Whether cc inlines a static function called once (driver/args.inlines_called_once):
    # then one only a copied nest calls is forced inline (rewrite/emit.forced_inline).
    inline_once: bool = True
    # cc may reorder floating-point arithmetic (-ffast-math...): nests that compute in
    # floating point are not hinted (passes/prefetch.py)
    reassociates: bool = False

    @property
    def run_floor(self) -> int:
        """The fewest bytes a run of a nest must span for its hints to be set up at
        entry (rewrite/emit.py): a quarter block, at least a page.  Runs under a block
        are hinted by the library as continuations of earlier runs at their site (a
        helper called on consecutive segments); under the floor, the entry's set-up
        would cost about as much as the run (a key comparison over `keylen` elements).
        The paper preset keeps its block (it hints every run of a hinted nest)."""
        if self.preset == "paper":
            return self.block_size
        return max(self.page_size, self.block_size // 4)

    def __post_init__(self) -> None:
        # The paper's machine (Section 3.2.2.1): 4-page blocks, 100,000-cycle I/O latency,
        # 10,000-cycle prefetch overhead.  Adaptive: 64 KiB blocks, distance from the runtime.
        paper = self.preset == "paper"
        if self.block_size == 0:
            object.__setattr__(self, "block_size", 4 * self.page_size if paper else 64 << 10)
        if self.latency_cycles == 0:
            object.__setattr__(self, "latency_cycles", 100_000)


def decode_source(data: bytes) -> str:
    """C source bytes as text: UTF-8, with any other byte kept (surrogateescape), so that
    encode_source gives back exactly the bytes read and identifiers such as `δ` survive."""
    return data.decode("utf-8", "surrogateescape")


def encode_source(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@lru_cache(maxsize=4)
def _newlines(data: bytes) -> list[int]:
    return [m.start() for m in re.finditer(b"\n", data)]


def line_at(data: bytes, offset: int) -> int:
    """The 1-based line of byte `offset` of source `data` (its newlines found once per
    text, so asking for every nest of a long file stays linear)."""
    return bisect_left(_newlines(data), offset) + 1


@dataclass
class Transformed:
    text: str                  # the whole translation unit to compile (with #line directives)
    changed: bool              # False: text is the original, byte for byte
    report: list[dict]         # one entry per loop nest: what was found and decided
    warnings: list[str]        # file:line: messages for the user (e.g. unparseable code)
    # The text without the optional insertions (Insertion.optional), for the driver to
    # compile when cc rejects `text`; None when there are none.
    plain: str | None = None
