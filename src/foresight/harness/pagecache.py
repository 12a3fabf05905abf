"""How much of a file the page cache holds: the check that a cold run starts cold.

cachestat(2) (Linux 6.5; system call 451 on every architecture) counts a file's cached
pages without touching them; before it, mincore(2) over a read-only shared mapping of
the file does the same page by page.  Dropping the page cache can leave pages behind
(pages mapped and locked by another process, dirty pages not yet written), and a "cold"
run that finds its data cached measures the cache, not the disk (the prefetch-thread
paper's Table 3 compares reboots with flushes for this reason).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import stat

_SYS_CACHESTAT = 451
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
_MAP_FAILED = ctypes.c_void_p(-1).value


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [("nr_cache", ctypes.c_uint64), ("nr_dirty", ctypes.c_uint64),
                ("nr_writeback", ctypes.c_uint64), ("nr_evicted", ctypes.c_uint64),
                ("nr_recently_evicted", ctypes.c_uint64)]


def cached_pages(path: str) -> int | None:
    """Pages of regular file PATH in the page cache; None when it cannot be told (not a
    regular file, unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size == 0:
            return 0
        rng, out = _Range(0, 0), _Stat()
        if _libc.syscall(_SYS_CACHESTAT, fd, ctypes.byref(rng), ctypes.byref(out), 0) == 0:
            return int(out.nr_cache)
        return _mincore_pages(fd, st.st_size)
    finally:
        os.close(fd)


def _mincore_pages(fd: int, size: int) -> int | None:
    addr = _libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if addr in (None, _MAP_FAILED):
        return None
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        vec = ctypes.create_string_buffer((size + page - 1) // page)
        if _libc.mincore(addr, size, vec) != 0:
            return None
        return sum(b & 1 for b in vec.raw)
    finally:
        _libc.munmap(addr, size)
