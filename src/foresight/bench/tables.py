"""A suite's results as tables: on the console (rich), and as Markdown with the command,
the commit and the conditions at the top (`--markdown`, what docs/results.md is made of).

A suite describes its tables once, as `Table` data; both renderings read the same
objects, so the console and the Markdown cannot disagree."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from foresight.bench.common import SOURCE_TREE
from foresight.harness import environment
from foresight.reports import console
from foresight.units import format_size


@dataclass(frozen=True)
class Table:
    """One result table.  A row may have fewer cells than there are columns (an entry
    that was skipped says why in its third cell); `left` names the columns aligned left,
    the others (numbers) are aligned right."""
    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]]
    left: tuple[str, ...] = ()


def print_tables(tables: Sequence[Table], notes: Sequence[str] = ()) -> None:
    """The tables on stdout, then the notes, a line each."""
    from rich.markup import escape
    from rich.table import Table as RichTable

    for t in tables:
        rt = RichTable(title=escape(t.title), title_justify="left")
        for c in t.columns:
            rt.add_column(escape(c), justify="left" if c in t.left else "right")
        for row in t.rows:
            rt.add_row(*map(escape, row))
        console().print(rt)
    for line in notes:
        print(line)


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(t: Table) -> str:
    """T as a Markdown (GitHub) table, with its title above it in bold."""
    width = len(t.columns)
    lines = [f"**{_cell(t.title)}**", "",
             "| " + " | ".join(map(_cell, t.columns)) + " |",
             "|" + "|".join(":---" if c in t.left else "---:" for c in t.columns) + "|"]
    for row in t.rows:
        cells = [*row, *[""] * (width - len(row))]
        lines.append("| " + " | ".join(map(_cell, cells)) + " |")
    return "\n".join(lines)


def commit() -> str:
    """The source tree's commit (`git rev-parse --short HEAD`) and whether files it tracks
    were changed since; "unknown" outside a git checkout of the sources."""
    if not (SOURCE_TREE / "src" / "foresight").is_dir():   # installed, not a checkout
        return "unknown"

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(SOURCE_TREE), *args], capture_output=True,
                              text=True)

    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode != 0 or not head.stdout.strip():
            return "unknown"
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except OSError:   # no git
        return "unknown"
    return head.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def machine(env: dict, swap: str | None = None) -> str:
    """The machine and system settings a result was measured under, in one line, from a
    report's environment block; SWAP, when given, says where the swap came from."""
    parts = [f"kernel {env.get('kernel')}", f"{env.get('cpus')} CPUs"]
    if env.get("mem_total_bytes"):
        parts.append(f"{format_size(env['mem_total_bytes'])} RAM")
    if env.get("cgroup_version"):
        parts.append(f"cgroup v{env['cgroup_version']}")
    disks = env.get("read_ahead_kb") or {}
    if disks:
        parts.append("read_ahead_kb " + ", ".join(f"{d} {kb}" for d, kb in disks.items()))
    if env.get("page_cluster") is not None:
        parts.append(f"page-cluster {env['page_cluster']}")
    if swap is None:
        swap = f"swap {format_size((env.get('swap') or {}).get('total_bytes') or 0)}"
    parts.append(swap)
    if env.get("transparent_hugepage"):
        parts.append(f"THP {env['transparent_hugepage']}")
    return ", ".join(parts) + environment.settings_text(env)


# The keys of a suite's results that say how it ran, in the order the Markdown says them.
CONDITIONS = (
    ("size", lambda v: f"size {v}"),
    ("mem_limit_bytes", lambda v: f"memory cap {format_size(v)}"),
    ("ratio", lambda v: f"data {v:g}× the cap"),
    ("ratios", lambda v: "data " + ", ".join(f"{r:g}" for r in v) + "× the cap"),
    ("data_bytes", lambda v: f"{format_size(v)} of data"),
    ("readahead_kb", lambda v: f"read_ahead_kb {v} (set for the run)"),
    ("backing", lambda v: f"{v} backing"),
    ("repeat", lambda v: "one run per variant" if v == 1 else f"median of {v} runs per variant"),
    ("compiler_version", lambda v: f"C compiler {v}"),
)


def run_conditions(res: dict) -> str:
    """The conditions a suite ran under, from the keys of its results that say them."""
    return ", ".join(say(res[k]) for k, say in CONDITIONS if k in res) or "the suite's defaults"


def markdown(command: str, res: dict, tables: Sequence[Table], notes: Sequence[str]) -> str:
    """The Markdown document `--markdown` writes: how to make it again and under what
    conditions it was measured, then the tables and the notes the console shows."""
    head = [f"# foresight bench {res.get('suite', '')}".rstrip(), "",
            f"- Command: `{command}`",
            f"- Commit: {commit()}",
            f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            f"- Conditions: {run_conditions(res)}"]
    if res.get("environment"):
        head.append(f"- Machine: {machine(res['environment'])}")
    body = [*(markdown_table(t) for t in tables), *notes]   # a note is a paragraph
    return "\n".join(head) + "\n\n" + "\n\n".join(body) + "\n"
