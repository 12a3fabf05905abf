"""docs/architecture.md's map (its first code block) names every module: a newcomer finds
each file's job there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_module_is_in_the_architecture_map():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"```\n(.*?)```", doc, re.S).group(1)
    words = set(re.findall(r"[\w.]+\.(?:py|c|h)\b", block))
    modules = [p for p in (ROOT / "src" / "foresight").rglob("*.py") if p.name != "__init__.py"]
    modules += list((ROOT / "runtime" / "src").glob("*.c"))
    for part in ("src", "sim", "nbdkit"):
        modules += list((ROOT / "sharedcache" / part).glob("*.c"))
    modules += list((ROOT / "sharedcache" / "include").glob("*.h"))
    missing = sorted(str(p.relative_to(ROOT)) for p in modules if p.name not in words)
    assert not missing, f"not in docs/architecture.md's map: {missing}"
