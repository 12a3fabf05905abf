"""`foresight bench sharedcache`: clients sharing an I/O node's cache, simulated (paper 3).

Each workload (src/foresight/sharedcache/workloads.py) is written as a trace for each
client count and run by `foresight sim` under every policy: none (hints ignored), plain
(every hint carried out), coarse and fine (throttling and pinning, Section V) and
optimal (the oracle of Figure 21), and none and plain again with Belady's MIN
replacement (the future from a first run: a reference for what replacement alone could
gain).  Reported per workload and
client count: the
makespan without prefetching, each policy's gain over no prefetching and over plain
prefetching (the two are kept apart: the paper's headline mixes them), and the fraction
of plain prefetches that were harmful (Figure 4).  The simulator is deterministic, so
each configuration runs once.

Compute per block (the trace's think time) is `--compute` times the time the device
model takes to read one block sequentially and send it, so a single client is about as
busy computing as reading, as in the paper's one-client runs.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from foresight.bench import suite
from foresight.bench.common import pyplot
from foresight.bench.tables import Table, machine
from foresight.errors import UsageError
from foresight.harness import environment
from foresight.sharedcache import live, sweeps
from foresight.sharedcache.sweeps import FIGURES
from foresight.sharedcache.workloads import NAMES
from foresight.units import format_size, parse_size

POLICIES = ("none", "plain", "coarse", "fine", "optimal")
MIN_RUNS = ("none", "plain")   # also run with Belady's MIN replacement
# block read + link transfer of one 64 KiB block, µs, per device model (docs/sharedcache.md)
BLOCK_US = {"vm": 65536 / 0.8e9 * 1e6 + 65536 / 4e9 * 1e6,
            "paper": 65536 / 25e6 * 1e6 + 65536 / 12.5e6 * 1e6}
BLOCK = 64 * 1024
FULL = {"clients": "1,2,4,8,16", "data": "2G", "cache": "64M", "client_cache": "16M"}
QUICK = {"clients": "1,2,4,8", "data": "256M", "cache": "8M", "client_cache": "2M"}
# The paper's numbers at 8 clients (percent gain over no prefetching), for the notes.
PAPER = {"plain": {"mgrid": 14.5, "cholesky": 13.7, "neighbor": 4.3, "med": 6.1},
         "coarse": {"mgrid": 19.6, "cholesky": 16.7, "neighbor": 10.4, "med": 13.3},
         "fine": {"mgrid": 34.6, "cholesky": 25.9}}


def figures_list(text: str | None) -> list[str]:
    if not text:
        return []
    return suite.choose(text, FIGURES, "figure", "--figs")


def measure(ns: argparse.Namespace) -> dict:
    workloads = suite.choose(ns.workloads, NAMES, "workload", "--workloads")
    try:
        clients = sorted({int(c) for c in ns.clients.split(",") if c})
    except ValueError:
        clients = []
    if not clients or clients[0] < 1 or clients[-1] > 256:
        raise UsageError(f"--clients {ns.clients!r}: give 1 to 256 clients, comma-separated")
    figs = figures_list(ns.figs)
    data = parse_size(ns.data)
    for opt in ("cache", "client_cache"):   # sizes as the simulator reads them, before the run
        if not re.fullmatch(r"\d+[KMGT]?", getattr(ns, opt)):
            raise UsageError(f"--{opt.replace('_', '-')} {getattr(ns, opt)!r}: a whole "
                             "number of bytes, K, M, G or T, e.g. 64M")
    blocks = data // BLOCK
    if blocks < 64:
        raise UsageError(f"--data {ns.data}: at least 4M (64 blocks of 64K)")
    think = ns.compute * BLOCK_US[ns.disk]
    rows, figures = [], {}
    common = ["--cache", ns.cache, "--client-cache", ns.client_cache, "--disk", ns.disk]
    with tempfile.TemporaryDirectory(prefix="foresight-sharedcache-") as tmp:
        r = sweeps.Runner(Path(tmp), blocks, think, common)
        for w in workloads:
            for n in clients:
                trace = [r.trace(w, n)]
                runs = {p: r.run(trace, p) for p in POLICIES}
                for p in MIN_RUNS:   # Belady's replacement, with and without prefetching
                    runs[f"{p}+min"] = r.run(trace, p, ["--replacement", "min"])
                base, plain = runs["none"]["makespan_s"], runs["plain"]["makespan_s"]
                rows.append({"workload": w, "clients": n, "trace_lines": r.lines[w, n],
                             "runs": runs,
                             "gain_over_none": {p: sweeps.gain(base, x["makespan_s"])
                                                for p, x in runs.items()},
                             "gain_over_plain": {p: sweeps.gain(plain, x["makespan_s"])
                                                 for p, x in runs.items()}})
                print(f"{w} at {n} clients: " + ", ".join(
                    f"{p} {rows[-1]['gain_over_none'][p]:+.1f}%" for p in POLICIES[1:]),
                    flush=True)
        for f in figs:
            figures[f] = (sweeps.other_applications(r) if f == "20"
                          else sweeps.harm_matrices(r, workloads) if f == "5"
                          else sweeps.sweep(r, sweeps.SWEEPS[f], workloads))
            print(f"figure {f} done", flush=True)
        lived = (live.measure(workloads, live.CLIENTS, Path(tmp), ns.live_repeat)
                 if ns.live else None)
    return {"suite": "sharedcache", "workloads": workloads, "clients": clients,
            "data_bytes": data, "block_bytes": BLOCK, "cache": ns.cache,
            "client_cache": ns.client_cache, "disk": ns.disk, "compute": ns.compute,
            "think_us": think, "epochs": 100, "k": 3, "rows": rows, "figures": figures,
            "paper_8_clients": PAPER, "live": lived,
            "environment": environment.environment(None)}


def _core_cell(c: dict | None) -> str:
    if not c:
        return "-"
    return f"{c['share'] * 100:.3f}% ({c['ns_per_call']:,.0f} ns x {c['calls']:,})"


class SharedCache(suite.Suite):
    name = "sharedcache"
    help = "clients sharing an I/O node's cache, simulated: throttling and pinning (paper 3)"
    repeat = False

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--workloads", metavar="A,B",
                            help=f"comma-separated: {', '.join(NAMES)} (default all)")
        parser.add_argument("--clients", metavar="N,N",
                            help="client counts (default 1,2,4,8,16)")
        parser.add_argument("--data", help="the shared file (default 2G)")
        parser.add_argument("--cache", help="the I/O node's cache (default 64M)")
        parser.add_argument("--client-cache", help="each client's own cache (default 16M)")
        parser.add_argument("--disk", choices=sorted(BLOCK_US), default="vm",
                            help="the device model (default vm; paper: 10 ms + 25 MB/s, "
                            "100 Mb/s)")
        parser.add_argument("--compute", type=suite.positive, default=1.0,
                            help="compute per block, in sequential block reads (default 1)")
        parser.add_argument("--figs", metavar="N,N",
                            help="also the sensitivity figures: " + ", ".join(FIGURES) +
                            " (paper 3's numbering; default none)")
        parser.add_argument("--live", action="store_true",
                            help="also run the workloads on a real I/O node with real "
                            "clients (foresight cluster run) at 2, 4 and 8 clients, beside "
                            "the simulator on the same traces (about 10 minutes)")
        parser.add_argument("--live-repeat", type=suite.at_least_one, default=1, metavar="K",
                            help="--live: runs per policy, alternating; medians (default 1)")
        parser.add_argument("--quick", action="store_true",
                            help="defaults an eighth the size: 256M of data, 8M cache, "
                            "2M client caches, 1-8 clients")

    def measure(self, ns: argparse.Namespace) -> dict:
        defaults = QUICK if ns.quick else FULL
        for opt, value in defaults.items():
            if getattr(ns, opt) is None:
                setattr(ns, opt, value)
        return measure(ns)

    def tables(self, res: dict) -> list[Table]:
        out = []
        for w in res["workloads"]:
            rows = []
            for r in (x for x in res["rows"] if x["workload"] == w):
                g, gp, plain = r["gain_over_none"], r["gain_over_plain"], r["runs"]["plain"]
                rows.append((str(r["clients"]), f"{r['runs']['none']['makespan_s']:.2f} s",
                             *(f"{g[p]:+.1f}%" for p in POLICIES[1:]),
                             *(f"{g[p + '+min']:+.1f}%" if p + "+min" in g else "–"
                               for p in MIN_RUNS),
                             f"{gp['fine']:+.1f}%",
                             f"{plain['harmful_fraction'] * 100:.1f}%",
                             f"{r['runs']['fine']['harmful_prefetches']:,}"
                             f" / {plain['harmful_prefetches']:,}"))
            out.append(Table(
                f"{w}: gain over no prefetching ({format_size(res['data_bytes'])} of data, "
                f"{res['cache']} cache, {res['client_cache']} client caches, disk "
                f"{res['disk']})",
                ("clients", "none", "plain", "coarse", "fine", "optimal", "none, MIN",
                 "plain, MIN", "fine over plain",
                 "harmful (plain)", "harmful fine / plain"), rows))
        if res.get("live"):
            lv = res["live"]
            out.append(Table(
                f"Live: a real I/O node and real clients beside the simulator on the same "
                f"traces ({format_size(lv['data_bytes'])} of data, {lv['node_cache']} node "
                f"cache, {lv['client_mem']} clients, disk {lv['disk_delay']} per block)",
                ("workload", "clients", *(f"{p} live / sim" for p in live.POLICIES),
                 "order live", "order sim", "same", "separated pairs agreeing"),
                [(r["workload"], str(r["clients"]),
                  *(f"{r['live_s'][p]:.2f} / {r['sim_s'][p]:.2f} s" for p in live.POLICIES),
                  " < ".join(r["live_order"]), " < ".join(r["sim_order"]),
                  "yes" if r["same_order"] else "no",
                  f"{r['separated_agree']} of {r['separated_pairs']}") for r in lv["rows"]],
                left=("workload", "order live", "order sim")))
            if any(r.get("policy_core") for r in lv["rows"]):
                out.append(Table(
                    "Table I, live: the node's policy core (accounting and control) as a "
                    "share of the makespan, and its time per call",
                    ("workload", "clients", *live.POLICIES),
                    [(r["workload"], str(r["clients"]),
                      *(_core_cell(r["policy_core"].get(p)) for p in live.POLICIES))
                     for r in lv["rows"]], left=("workload",)))
        for f in res.get("figures", {}).values():
            if f["fig"] == "5":
                out.append(Table(
                    f"Figure 5: {f['title']}, {f['clients']} clients: epochs where",
                    ("workload", "epochs with harm", "one prefetcher > 66%",
                     "two prefetchers > 85%", "one affected > 50%", "intra-client share"),
                    [(r["workload"], f"{r['epochs_with_harm']} of {r['epochs']}",
                      str(r["one_prefetcher_66"]), str(r["two_prefetchers_85"]),
                      str(r["one_affected_50"]), f"{r['intra_share'] * 100:.0f}%")
                     for r in f["rows"]], left=("workload",)))
                continue
            rows = [(r["workload"], "" if r["clients"] is None else str(r["clients"]),
                     *(f"{r['points'][v]['gain_over_none']:+.1f}%" for v in f["values"]))
                    for r in f["rows"]]
            out.append(Table(f"Figure {f['fig']}: {f['title']}: {f['policy']}'s gain over no "
                             f"prefetching, by {f['param']}",
                             ("workload", "clients", *f["values"]), rows, left=("workload",)))
        return out

    def notes(self, res: dict) -> list[str]:
        paper = ", ".join(f"{p} " + "/".join(f"{v}" for v in d.values())
                          for p, d in PAPER.items())
        return [f"Simulated (foresight sim, deterministic), compute {res['think_us']:.0f} us "
                f"per block, hints 8 blocks ahead, 100 epochs, K 3. The paper at 8 clients, "
                f"gain over none in % (mgrid/cholesky/neighbor/med): {paper}. \"none, MIN\" "
                f"and \"plain, MIN\": without and with plain prefetching, Belady's MIN "
                f"instead of LRU with aging (the future from a first run of the same "
                f"policy), over none with LRU with aging.",
                *self._live_notes(res.get("live")),
                machine(res["environment"])]

    @staticmethod
    def _live_notes(lv: dict | None) -> list[str]:
        if not lv:
            return []
        same = sum(r["same_order"] for r in lv["rows"])
        agree = sum(r["separated_agree"] for r in lv["rows"])
        pairs = sum(r["separated_pairs"] for r in lv["rows"])
        runs = "one run" if lv["repeat"] == 1 else f"the median of {lv['repeat']} alternating runs"
        return [f"Live: the traces played by replay clients (benchmarks/shared/replay.c) "
                f"under `foresight cluster run`, {runs} per policy, the makespan the last "
                f"client's wall time; compute {lv['think_us']:.0f} us per block as a sleep "
                f"(a client stands for a node with a processor of its own); the node's disk "
                f"moves a block per {lv['disk_delay']}; simulated with the same node cache, "
                f"{lv['sim_client_cache']} client caches (what the {lv['client_mem']} cgroup "
                f"leaves the page cache) and --disk-delay {lv['disk_delay']}. The policies "
                f"rank the same live and simulated in {same} of {len(lv['rows'])} rows; of "
                f"the pairs of policies the simulator puts more than "
                f"{lv['separated'] * 100:g}% apart, the live runs order {agree} of {pairs} "
                f"the same way."]

    def plot(self, res: dict, directory: str) -> list[str]:
        plt = pyplot()
        Path(directory).mkdir(parents=True, exist_ok=True)
        files = []
        fig, axes = plt.subplots(1, len(res["workloads"]), figsize=(4 * len(res["workloads"]),
                                                                    3.2), squeeze=False)
        for ax, w in zip(axes[0], res["workloads"], strict=True):
            rows = [r for r in res["rows"] if r["workload"] == w]
            xs = [r["clients"] for r in rows]
            for p in POLICIES[1:]:
                ax.plot(xs, [r["gain_over_none"][p] for r in rows], marker="o", label=p)
            ax.set_xscale("log", base=2)
            ax.set_title(w)
            ax.set_xlabel("clients")
            ax.axhline(0, color="grey", lw=0.5)
        axes[0][0].set_ylabel("gain over no prefetching (%)")
        axes[0][-1].legend(fontsize=8)
        fig.tight_layout()
        files.append(str(Path(directory) / "sharedcache-gain.png"))
        fig.savefig(files[-1], dpi=120)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(6, 3.2))
        for w in res["workloads"]:
            rows = [r for r in res["rows"] if r["workload"] == w]
            ax.plot([r["clients"] for r in rows],
                    [r["runs"]["plain"]["harmful_fraction"] * 100 for r in rows],
                    marker="o", label=w)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("clients")
        ax.set_ylabel("harmful prefetches (% of issued)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        files.append(str(Path(directory) / "sharedcache-harmful.png"))
        fig.savefig(files[-1], dpi=120)
        plt.close(fig)
        if res.get("live"):
            files.append(self._live_plot(plt, res["live"], directory))
        for f in res.get("figures", {}).values():
            if f["fig"] == "5":
                files.append(self._matrices(plt, f, directory))
                continue
            fig, ax = plt.subplots(figsize=(6, 3.2))
            for r in f["rows"]:
                label = r["workload"] + ("" if r["clients"] is None else f", {r['clients']}")
                ax.plot(f["values"], [r["points"][v]["gain_over_none"] for v in f["values"]],
                        marker="o", label=label)
            ax.set_xlabel(f["param"])
            ax.set_ylabel(f"{f['policy']}: gain over none (%)")
            ax.set_title(f"Figure {f['fig']}: {f['title']}", fontsize=9)
            ax.axhline(0, color="grey", lw=0.5)
            ax.legend(fontsize=6, ncol=2)
            fig.tight_layout()
            files.append(str(Path(directory) / f"sharedcache-fig{f['fig']}.png"))
            fig.savefig(files[-1], dpi=120)
            plt.close(fig)
        return files


    @staticmethod
    def _live_plot(plt, lv: dict, directory: str) -> str:
        """Each policy's gain over none, live (solid) and simulated (dashed)."""
        names = sorted({r["workload"] for r in lv["rows"]}, key=NAMES.index)
        fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.2), squeeze=False)
        for ax, w in zip(axes[0], names, strict=True):
            rows = [r for r in lv["rows"] if r["workload"] == w]
            xs = [r["clients"] for r in rows]
            for i, p in enumerate(live.POLICIES[1:]):
                color = f"C{i}"
                ax.plot(xs, [r["live_gain_over_none"][p] for r in rows], marker="o",
                        color=color, label=f"{p} live")
                ax.plot(xs, [r["sim_gain_over_none"][p] for r in rows], marker="x",
                        ls="--", color=color, label=f"{p} sim")
            ax.set_xscale("log", base=2)
            ax.set_title(f"{w}, live and simulated", fontsize=9)
            ax.set_xlabel("clients")
            ax.axhline(0, color="grey", lw=0.5)
        axes[0][0].set_ylabel("gain over no prefetching (%)")
        axes[0][-1].legend(fontsize=6)
        fig.tight_layout()
        path = str(Path(directory) / "sharedcache-live.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path

    @staticmethod
    def _matrices(plt, f: dict, directory: str) -> str:
        """Figure 5: each workload's worst epoch, prefetching x affected client."""
        fig, axes = plt.subplots(1, len(f["rows"]), figsize=(3.2 * len(f["rows"]), 3.2),
                                 squeeze=False)
        for ax, r in zip(axes[0], f["rows"], strict=True):
            ax.imshow(r["matrix"], cmap="Reds")
            ax.set_title(f"{r['workload']}, epoch {r['worst_epoch']}", fontsize=9)
            ax.set_xlabel("affected client")
            ax.set_ylabel("prefetching client")
        fig.tight_layout()
        path = str(Path(directory) / "sharedcache-fig5.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path


SUITE = SharedCache()
