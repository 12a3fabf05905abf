"""Byte sizes as users write them: 256M, 1.5G, 4096, 128K."""

import math

from foresight.errors import UsageError

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """Parse a size with an optional K/M/G/T suffix (powers of 1024; 'iB'/'B' allowed)."""
    s = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = s[-1:] if s[-1:] in _SUFFIX and s[-1:] != "" and not s[-1:].isdigit() else ""
    number = s[: len(s) - len(unit)]
    try:
        value = float(number)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value):  # "inf", "1e400" and "nan" parse as floats
        raise UsageError(f"not a size: {text!r} (expected e.g. 256M, 1G, 4096)")
    if value <= 0:
        raise UsageError(f"size must be positive: {text!r}")
    return int(value * _SUFFIX[unit])


def format_size(n: float) -> str:
    """Human-readable size: 268435456 -> '256.0 MiB'."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
