"""The shared-cache workloads: SPMD programs over one shared file, as `foresight sim`
traces (paper 3's four applications, written anew: its codes are not public).

Each workload is a function of the client count and the data size that returns every
client's program order: demand reads and writes of 64 KiB blocks, barriers between
phases, and the compiler's prefetch hints as Section II places them: for a loop that
streams through blocks, the first `distance` blocks before it starts (the prolog) and,
before each block is read, the block `distance` ahead (the steady state).  Reads whose
block the compiler cannot know (the hot set's lookups) get no hint.  Compute between
reads is `think` microseconds per block, the same for every client.

    mgrid     a multigrid V-cycle over z-slabs of each level's grid: smoothing reads
              a slab and one plane beyond each side (the halos its neighbours own)
    cholesky  a right-looking tiled Cholesky factorisation: each step's panel is read
              by every client updating the trailing matrix
    neighbor  scans of each client's partition of records, each record also looked up
              in a hot set of reference records all clients share
    med       an image volume sliced along z (planes), then y (a strided block per plane),
              a shared reference sub-volume read by all, then two volumes fused into a third
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

NAMES = ("mgrid", "cholesky", "neighbor", "med")


@dataclass
class Client:
    """One client's program order, as trace lines."""

    id: int
    distance: int
    think: float
    lines: list[str] = field(default_factory=list)

    def stream(self, blocks: list[int], hinted: bool = True) -> None:
        """Reads BLOCKS in order, hinted `distance` blocks ahead (Figure 2(b))."""
        d = self.distance if hinted else 0
        for b in blocks[:d]:
            self.lines.append(f"{self.id} P {b}")
        for i, b in enumerate(blocks):
            if d and i + d < len(blocks):
                self.lines.append(f"{self.id} P {blocks[i + d]}")
            self.lines.append(f"{self.id} R {b} {self.think:g}")

    def read(self, block: int) -> None:
        self.lines.append(f"{self.id} R {block} {self.think:g}")

    def write(self, blocks: Iterable[int]) -> None:
        self.lines.extend(f"{self.id} W {b}" for b in blocks)

    def barrier(self) -> None:
        self.lines.append(f"{self.id} B 0")


def _split(n: int, parts: int, i: int) -> range:
    """Part I of PARTS even, contiguous parts of range(N)."""
    return range(n * i // parts, n * (i + 1) // parts)


def mgrid(clients: list[Client], blocks: int) -> None:
    levels, cycles = 4, 2
    # finest level: u and r, each a cube of planes; coarser levels 1/8 the size
    finest = max(8, int(blocks * 7 / 16))
    sizes = [max(1, finest // 8 ** lv) for lv in range(levels)]
    bases, at = [], 0
    for n in sizes:
        bases.append((at, at + n))   # u, r
        at += 2 * n
    p = len(clients)

    def slab(base: int, n: int, c: Client, halo: bool) -> range:
        own = _split(n, p, c.id)
        plane = max(1, round(n ** (2 / 3))) if halo and own else 0
        return range(base + max(0, own.start - plane), base + min(n, own.stop + plane))

    def sweep(arrays: tuple[tuple[int, int], ...], out: tuple[int, int]) -> None:
        """Each client reads its slab of ARRAYS (base, size) with the halo planes, then
        writes its slab of OUT."""
        for c in clients:
            for base, n in arrays:
                c.stream(list(slab(base, n, c, True)))
            c.write(slab(*out, c, False))
            c.barrier()

    for _ in range(cycles):
        for lv in range(levels):                 # down: smooth, restrict
            u, r = bases[lv]
            sweep(((u, sizes[lv]), (r, sizes[lv])), (u, sizes[lv]))
        for lv in reversed(range(levels - 1)):   # up: interpolate and smooth
            u, r = bases[lv]
            coarse = (bases[lv + 1][0], sizes[lv + 1])
            sweep(((u, sizes[lv]), coarse, (r, sizes[lv])), (u, sizes[lv]))


def cholesky(clients: list[Client], blocks: int) -> None:
    tile = 64
    nt = 1
    while (nt + 1) * (nt + 2) // 2 * tile <= blocks:
        nt += 1
    index = {}
    for j in range(nt):
        for i in range(j, nt):
            index[i, j] = len(index) * tile
    p = len(clients)

    def tile_blocks(i: int, j: int) -> list[int]:
        return list(range(index[i, j], index[i, j] + tile))

    for k in range(nt):
        for c in clients:                        # the diagonal tile, by its owner
            if k % p == c.id:
                c.stream(tile_blocks(k, k))
                c.write(tile_blocks(k, k))
            c.barrier()
        for c in clients:                        # the panel below it
            for i in range(k + 1, nt):
                if i % p == c.id:
                    c.stream(tile_blocks(k, k) + tile_blocks(i, k))
                    c.write(tile_blocks(i, k))
            c.barrier()
        for c in clients:                        # the trailing matrix, by columns
            for j in range(k + 1, nt):
                if j % p != c.id:
                    continue
                for i in range(j, nt):
                    c.stream(tile_blocks(i, k) + tile_blocks(j, k) + tile_blocks(i, j))
                    c.write(tile_blocks(i, j))
            c.barrier()


def neighbor(clients: list[Client], blocks: int) -> None:
    hot = max(1, blocks // 128)                  # reference records, read by everyone
    records = blocks - hot
    p = len(clients)
    for c in clients:
        rng = random.Random(1000 + c.id)
        part = list(_split(records, p, c.id))
        for _ in range(2):                       # two passes over its partition
            for start in range(0, len(part), 16):
                chunk = [hot + b for b in part[start:start + 16]]
                c.stream(chunk)
                for _ in range(4):               # lookups the compiler cannot foresee
                    c.read(rng.randrange(hot))
            c.barrier()


def med(clients: list[Client], blocks: int) -> None:
    plane = 32                                   # blocks per z-plane
    nz = max(2, blocks // (3 * plane))
    vol = nz * plane
    a, b, out = 0, vol, 2 * vol
    p = len(clients)
    for c in clients:
        zs = _split(nz, p, c.id)
        c.stream([a + z * plane + x for z in zs for x in range(plane)])    # z-slices
        c.barrier()
        for y in _split(plane, p, c.id):                                   # y-slices
            c.stream([a + z * plane + y for z in range(nz)])
        c.barrier()
        ref = range(0, vol // 8)                                           # shared
        shift = len(ref) * c.id // p
        c.stream([a + ref[(i + shift) % len(ref)] for i in range(len(ref))])
        c.barrier()
        for z in zs:                                                       # fusion
            c.stream([v + z * plane + x for x in range(plane) for v in (a, b)])
            c.write(out + z * plane + x for x in range(plane))
        c.barrier()


WORKLOADS: dict[str, Callable[[list[Client], int], None]] = {
    "mgrid": mgrid, "cholesky": cholesky, "neighbor": neighbor, "med": med}


def write_trace(name: str, path: Path, clients: int, blocks: int, think: float,
                distance: int = 8) -> int:
    """Writes workload NAME for CLIENTS clients over BLOCKS blocks of data to PATH; the
    number of lines."""
    cs = [Client(i, distance, think) for i in range(clients)]
    WORKLOADS[name](cs, blocks)
    lines = 0
    with open(path, "w") as f:
        f.write(f"# {name}: {clients} clients, {blocks} blocks, think {think:g} us, "
                f"hints {distance} blocks ahead\n")
        for c in cs:
            f.write("\n".join(c.lines))
            f.write("\n")
            lines += len(c.lines)
    return lines
