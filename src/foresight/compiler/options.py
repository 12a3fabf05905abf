"""What `foresight cc` assumes at compile time: memory, page and block size, latency model."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CompileOptions:
    prefetch: bool = True            # False: --no-prefetch, the same pipeline with no hints
    memory_bytes: int | None = None  # memory assumed at compile time; None: read at run time
    page_size: int = 4096
    block_size: int = 64 * 1024      # bytes per block prefetch (paper Section 3.2.1)
    preset: str = "adaptive"         # "adaptive": distance from the runtime; "paper": Eq. (1)
    latency_cycles: int = 3_000_000  # paper preset: I/O latency in cycles (Eq. (1))
    site_file: str | None = None     # file name for per-site statistics (default: the source)
    extra: dict = field(default_factory=dict)


@dataclass
class Transformed:
    text: str                  # the whole translation unit to compile (with #line directives)
    changed: bool              # False: text is the original, byte for byte
    report: list[dict]         # one entry per loop nest: what was found and decided
    warnings: list[str]        # file:line: messages for the user (e.g. unparseable code)
