"""`foresight color probe`: whether this machine's L2 is indexed by the colors of the
kernel's page frames (cachesim/src/probe.c times the chases); the verdict on one line,
the figures as JSON with --json."""

from __future__ import annotations

import argparse
import json
import subprocess

from foresight import paths
from foresight.errors import UsageError
from foresight.reports import write_json

NAME = "foresight-color-probe"


def main(ns: argparse.Namespace) -> int:
    exe = paths.libexec_dir() / NAME
    if not exe.exists():
        raise UsageError(f"the color probe is not built ({exe}): run `make setup`")
    p = subprocess.run([str(exe)], capture_output=True, text=True)
    if p.returncode != 0:
        raise UsageError(p.stderr.strip().removeprefix("foresight color probe: error: "))
    res = json.loads(p.stdout)
    real = res["guest_colors_are_host_colors"]
    verdict = ("inconclusive: the timing did not see even the L1's set conflict "
               f"(x{res['l1_control_ratio']:.2f})" if real is None else
               "guest page colors are the cache's: pages of one color share L2 sets"
               if real else
               "guest page colors are not the cache's (a virtual machine's frames are not "
               "the host's): page-color hints cannot act on this machine's L2")
    print(f"L2 {res['l2_bytes'] >> 10} KiB, {res['ways']} ways, {res['colors']} colors of 4 "
          f"KiB pages: {res['lines_chased']} lines of one color {res['same_color_ns']:.2f} "
          f"ns a step, of distinct colors {res['spread_ns']:.2f} ns (x{res['ratio']:.2f}): "
          f"{verdict}")
    if ns.json:
        write_json(ns.json, res)
    return 0
