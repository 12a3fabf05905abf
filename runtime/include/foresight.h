/*
 * foresight.h — the run-time layer of Foresight: nonbinding I/O prefetch and
 * release hints for programs whose data does not fit in memory.
 *
 * Every call here is a *hint*.  It never changes what the program computes,
 * never reports an error to the caller and may be dropped at any time (the
 * queue is full, memory is short, the runtime is absent or disabled).
 *
 * The calls are `static inline`: the common case — a prefetch of pages the
 * run-time layer already believes resident — is a few loads and a bit test
 * with no call and no atomic read-modify-write (paper Section 2.4.1, the
 * user-level residency filter).  Only a page not known resident reaches the
 * library.  The library's entry points are weak references, so an object built
 * against this header links and runs without libforesight: every hint becomes
 * a no-op.  FORESIGHT_DISABLE=1 has the same effect at run time.
 *
 * Thread-safe; one runtime per process however many shared objects use it;
 * safe across fork (the child starts with an empty residency table).
 *
 * What every call guarantees, whatever its arguments:
 *   - It returns in bounded time and memory.  A range of more than 512 pages (2 MiB) is
 *     cut to the mapped memory in it (from its first mapped page to the first hole after
 *     that); a prefetch then to three quarters of the smaller of the memory limit and
 *     physical memory, a release to its first 256 GiB.  Loops over a
 *     range take whole table words, skip whole unallocated GiB, and work on at most
 *     512 pages per system call.  The residency table grows only for memory that was
 *     mapped when hinted (about 32 KiB per GiB of it), never for address space merely
 *     named.
 *   - It keeps errno, is not a cancellation point, and never stops or kills the program.
 *   - It may be made in a signal handler.  A hint that arrives while its own thread is
 *     inside the library (a handler interrupted it there) is dropped at once and
 *     counted (`refused` in the statistics) before it touches any lock.  Any other
 *     hint from a handler runs the usual path, which uses only system calls, atomics
 *     and the library's own locks (which no code of the interrupted thread can hold
 *     then, so at worst it waits for another thread's short critical section): no
 *     malloc, no stdio, no thread creation.  The worker threads start with the runtime
 *     (before main) for that reason, and so does `foresight-memcg`, which under a memory
 *     cgroup limit reads the cgroup's memory.stat every 100 ms while its usage is at 3/4
 *     of the limit (memcg.c: the kernel's reclaim then decides from fresh statistics;
 *     none without a cgroup limit, none under FORESIGHT_DISABLE=1).  One exception: in
 *     a process made by fork(), the first hint that reaches the library starts them
 *     (pthread_create); a forked child that hints only from a handler should make one
 *     hint from ordinary code first.  The inline fast path is relaxed atomic loads and stores on the site and
 *     the table, safe anywhere.  A hint made on a handler's alternate stack (the library
 *     watches sigaltstack) with less than 6 KiB of it left is dropped before it calls
 *     anything (counted as refused; a loop nest then runs unhinted): no path
 *     of the library goes deeper.  With GCC the calls into the library are bound when
 *     the program starts (noplt), so a handler's first hint never runs the lazy binder
 *     on its stack.  A hint from a thread in seccomp's strict mode, or made after the
 *     program installed a seccomp filter, is dropped the same way (prctl and syscall
 *     are interposed: the hints' system calls could get the thread killed).
 *
 * Environment (validated once at start-up; a bad value prints one message on
 * stderr and the default is used):
 *   FORESIGHT_DISABLE=1          all hints become no-ops
 *   FORESIGHT_STATS=1|stderr     statistics table on stderr at exit (0 or unset: none)
 *   FORESIGHT_STATS=PATH         the same statistics as JSON, written to PATH.tmp.PID and
 *                                renamed to PATH; PATH must contain '/' or end in .json
 *                                (any other value, e.g. 2, is rejected: statistics off)
 *   FORESIGHT_MEM=SIZE           memory budget (default: the cgroup's limit, else RAM)
 *   FORESIGHT_WORKERS=N          worker threads issuing requests (1..64; default 2, at most
 *                                the usable CPUs minus one, at least 1)
 *   FORESIGHT_INLINE=M           none | anon | all   (default none): which requests the
 *                                program's own thread issues instead of queueing them for
 *                                the workers.  none: every request is queued.  anon:
 *                                releases, and prefetches of at least 16 pages, of
 *                                anonymous memory (heap, malloc'd arrays: swap-backed);
 *                                file mappings and one-page gathers are queued.  Only with
 *                                FORESIGHT_METHOD=willneed, which never waits for the
 *                                reads.  Measured: docs/decisions.md
 *   FORESIGHT_QUEUE=N            request queue slots (default 1024)
 *   FORESIGHT_METHOD=M           willneed | populate | both   (default willneed: fastest
 *                                measured, see docs/decisions.md)
 *   FORESIGHT_CHUNK=SIZE         bytes per MADV_WILLNEED call (default 128K)
 *   FORESIGHT_LOOKAHEAD=SIZE     bytes a compiled loop keeps prefetched ahead of its accesses
 *                                (default 4M, the hand-instrumented microbenchmarks' distance,
 *                                but at most a thirty-second of the memory limit; a size given
 *                                here is used as given)
 *   FORESIGHT_LOOKAHEAD=measured latency x bandwidth measured on the program's own prefetches
 *                                (one in 16 read synchronously and timed), within [128K,
 *                                limit/32]; 4M until enough samples exist.  The statistics
 *                                show the values.  Measured on the NAS suite it was smaller,
 *                                and slower, than 4M: see docs/decisions.md
 *   FORESIGHT_VERIFY_PERIOD=N    filtered calls per site between mincore checks (default 1024)
 *   FORESIGHT_RELEASE=M          adaptive | auto | cold | pageout | off   (default adaptive).
 *                                auto: only while the memory in use is at least 3/4 of the
 *                                limit -- the cgroup's usage, the resident set under
 *                                FORESIGHT_MEM, else RAM less MemAvailable -- MADV_COLD, and
 *                                MADV_PAGEOUT when the prefetch footprint is over budget;
 *                                skipped releases keep their pages marked resident until
 *                                pressure is first seen, and count as releases_idle.
 *                                adaptive: as auto, and MADV_PAGEOUT while the site's
 *                                paged-out pages stay untouched (no more than 1 in 8 found
 *                                mapped again by a later release within a limit's worth of
 *                                prefetching); faster on streams (docs/decisions.md)
 *   FORESIGHT_RANDOM=0|1         MADV_RANDOM over the file-mapped range an indirect site's
 *                                targets span, while its loop nest runs, unless a sample
 *                                of them finds frontiers read-around serves (default 1)
 *   FORESIGHT_FILE_STREAMS=kernel|hint  what of the page cache (shared or read-only
 *                                file mappings) is left to the kernel: with kernel (default)
 *                                dense streams upwards go unhinted (its readahead reads them
 *                                ahead) and releases are not made (its reclaim drops clean
 *                                pages, the flusher writes dirty ones; counted as
 *                                releases_page_cache); hint treats it as any memory
 *   FORESIGHT_INCORE=skip|hint   a loop nest entered while the program's address space fits
 *                                in the memory budget runs without hints (skip, default),
 *                                or keeps them (hint)
 *   FORESIGHT_PIN=0|1|always     while a nest's hints are on, the process's threads (the
 *                                program's one thread and the library's) on one CPU: no
 *                                TLB-shootdown interrupts between the worker's paging and
 *                                the program (default 1: only while the worker pages
 *                                memory out and other processes leave a CPU to spare;
 *                                always: whatever the paging and load; 0: never).
 *                                The CPU: the program's, unless another of its mask
 *                                served under half its interrupts.
 *                                The program's mask queries, children and exec'd programs
 *                                see its own mask; its first thread or mask call ends the
 *                                pin.  Not after indirect nests, with OpenMP, or with 2+
 *                                workers (runtime/src/pin.c; docs/decisions.md)
 *   FORESIGHT_FILTER=0|1         the user-level residency filter (default 1).  0 is the paper's
 *                                "without run-time filtering" (Figure 12(c)): no call is
 *                                filtered inline or in the library, and the workers hand every
 *                                mapped page of a request to the kernel, resident or not.  The
 *                                memory budget, the queue (its limit and coalescing of touching
 *                                requests) and releases work as usual; statistics count
 *                                considered/issued/pages as usual and `filtered` stays 0.
 *   FORESIGHT_TRACE=PATH         write an event trace to PATH (below).  Works with
 *                                FORESIGHT_DISABLE=1 too (faults only): the baseline run.
 *   FORESIGHT_COLOR=off|sim|real page-coloring summaries (foresight_color_*, below): off
 *                                (default) ignores them; sim writes them, with the colors
 *                                computed for FORESIGHT_COLOR_CACHE, to FORESIGHT_COLOR_MAP
 *                                at each foresight_color_apply() that saw a new one (for
 *                                `foresight cachesim`); real (root, transparent huge pages)
 *                                also moves frames of those colors under the arrays' pages,
 *                                copying their data (docs/coloring.md).  Kept under
 *                                FORESIGHT_DISABLE=1.
 *   FORESIGHT_COLOR_MAP=PATH     where the map goes (required with sim; with real, the map
 *                                also counts what became of the pages)
 *   FORESIGHT_COLOR_CACHE=S,A    the cache the colors are for: size and associativity
 *                                (default: cpu0's L2 from sysfs, else 1M,1); colors =
 *                                S / (page size x A)
 *   FORESIGHT_NBD=URI            with FORESIGHT_NBD_FILE=PATH (the local view of that NBD
 *                                export, e.g. an nbdfuse mount's file): prefetches of
 *                                missing pages of a mapping of PATH go to the export's server
 *                                as NBD_CMD_CACHE instead of MADV_WILLNEED (the shared I/O
 *                                node of paper 3; `foresight cluster run` sets both).  A thread
 *                                loads libnbd and connects (dropped until then); if libnbd,
 *                                the server or CACHE is missing, one line on stderr and
 *                                prefetches are made locally
 *   FORESIGHT_PT=0|1             the prefetch thread of a program built with
 *                                `foresight cc --prefetch-thread` (default 1; 0: none, and
 *                                foresight_pt_start() runs nothing, not even its init)
 *   FORESIGHT_PT_FILES=GLOB      files the prefetch thread prefetches besides regular files
 *                                of 2 MiB or more: paths matching GLOB (fnmatch(3) without
 *                                flags: `*` also matches `/`)
 *   FORESIGHT_PT_QUEUE=N         calls the prefetch thread may run ahead of the program
 *                                (1..960; default 960)
 *   FORESIGHT_PT_AHEAD=SIZE      bytes of predicted reads it may run ahead (default 32M;
 *                                4K..16G)
 *   FORESIGHT_PT_RANDOM=0|1      the program's readahead off (POSIX_FADV_RANDOM) on a
 *                                descriptor while the thread has queued its reads
 *                                (default 1; 0: its readahead is left alone)
 *   FORESIGHT_PT_SCHED=window|eq1  when its predictions go to the disk: as soon as 64 are
 *                                queued and whenever it sleeps (window, the default), or
 *                                each when the paper's Eq. (1) says it is due, C*(j-i) -
 *                                (K+1)*T <= FORESIGHT_PT_SLACK (eq1)
 *   FORESIGHT_PT_SLACK=US        Eq. (1)'s Time_Threshold in microseconds (default 5000)
 *   FORESIGHT_PT_ISSUE=fadvise|uring  how its requests reach the kernel: posix_fadvise
 *                                (default), or IORING_OP_FADVISE entries of an io_uring of
 *                                its own (falls back to posix_fadvise where io_uring is
 *                                off or the library was built without liburing; the
 *                                statistics' pt_issue says which)
 *   FORESIGHT_PT_DRAIN=0|1       1 (for tests): the program's exit waits, 5 s at most, until
 *                                the thread has made every covered call the program made or
 *                                has ended, so its counters show what its slice did
 *                                (default 0)
 *
 * The event trace (FORESIGHT_TRACE=PATH), for measuring prefetch coverage from real faults.
 * Text, one event per line; fields separated by one space; addresses hex with 0x; t_ns is
 * CLOCK_MONOTONIC in nanoseconds.  Lines are written as events are collected, not in time
 * order: sort by t_ns.
 *   # foresight trace 1 page=4096 pid=<pid>               first line
 *   # faults unavailable: <strerror>                      perf_event_open failed (no F lines)
 *   F <page address> <t_ns> <wait_ns>                     a page fault in which an application
 *                                                         thread waited for I/O: a major fault,
 *                                                         or a minor fault during which the
 *                                                         thread blocked (below); t_ns is when
 *                                                         the kernel finished handling it,
 *                                                         wait_ns how long since it began
 *                                                         (0: its start was not seen)
 *   P <page address> <npages> <resident_before> <t_ns> <line>
 *                                                         a prefetch handed to the kernel
 *                                                         after filtering and coalescing, in
 *                                                         pieces of at most 512 pages: pages
 *                                                         [addr, addr + npages*page), of which
 *                                                         mincore() found resident_before
 *                                                         resident just before the reads were
 *                                                         started (t_ns).  With the filter on
 *                                                         a piece appears only when some page
 *                                                         of it was missing; line: the source
 *                                                         line of the hint's site (0: none)
 *   R <page address> <npages> <t_ns> <line> <mode>        pages released (rounded inward; a
 *                                                         piece of at most 512 pages) by the
 *                                                         site at line (0: none), mode cold
 *                                                         (MADV_COLD) or pageout (MADV_PAGEOUT).
 *                                                         A line names no file: sites of two
 *                                                         files may share it
 *   L <lost_fault_samples>                                last line: fault samples the kernel
 *                                                         dropped because a buffer was full
 * A fault on a page whose read the prefetch started but has not finished is an F line
 * after (in t_ns) the P line covering it: the thread blocks until the read completes.
 * (Linux with per-VMA locks accounts such a fault as minor, so major faults alone would
 * miss it; the runtime also samples fault starts and context switches, and a minor fault
 * in which the thread was switched out without being preempted is an F line too.)  A page
 * that arrived in time costs at most a minor fault without blocking, which is not traced.
 * So "prefetched hit" = in a P range and no later F; "prefetched fault" = an F after a P
 * covering the page (too late, or evicted again); "nonprefetched fault" = an F with no P
 * before it.  Faults are counted from the runtime's start-up (a constructor, before main)
 * in the thread that loaded it and in every thread it creates later, except the runtime's
 * own threads; not in forked children (they neither write nor rename the trace) nor in
 * programs it execs.  The trace is written to PATH.tmp and renamed to PATH when the program
 * returns from main or calls exit(); a killed program (or one calling _exit) leaves only
 * PATH.tmp.  An unwritable PATH gives one message on stderr and no trace; the program runs
 * unchanged.
 */
#ifndef FORESIGHT_H
#define FORESIGHT_H

/* A system header however it is found (foresight cc includes it by its absolute path):
 * its code is not the program's to warn about under -Wall -Wextra -pedantic -Werror. */
#if defined(__GNUC__)
#pragma GCC system_header
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* FILE, for the prefetch thread's stdio calls */
/* The library's own layout whatever the program's packing (-fpack-struct, #pragma
 * pack): its structures are shared with libforesight, built with natural alignment. */
#pragma pack(push, 16)

/* The header's own names (parameters, members, locals) and the C library's it calls
 * are kept from the program's macros: a header of the program may `#define line ...` or
 * `#define unused ...` before this one is included (after feature-test macros), or a
 * -D may.  Each is saved, undefined here and restored at the end; the list is checked
 * against the header's text (tests/compiler/test_header_names.py). */
#pragma push_macro("a")
#pragma push_macro("across")
#pragma push_macro("addr")
#pragma push_macro("advise")
#pragma push_macro("ahead")
#pragma push_macro("ap")
#pragma push_macro("arg")
#pragma push_macro("argc")
#pragma push_macro("args")
#pragma push_macro("argv")
#pragma push_macro("array")
#pragma push_macro("at")
#pragma push_macro("b")
#pragma push_macro("base")
#pragma push_macro("block")
#pragma push_macro("bounce")
#pragma push_macro("buf")
#pragma push_macro("bytes")
#pragma push_macro("c")
#pragma push_macro("cap")
#pragma push_macro("chunk")
#pragma push_macro("cnt")
#pragma push_macro("cond")
#pragma push_macro("consumed")
#pragma push_macro("copy")
#pragma push_macro("count")
#pragma push_macro("d")
#pragma push_macro("delim")
#pragma push_macro("dir")
#pragma push_macro("dist")
#pragma push_macro("e")
#pragma push_macro("f")
#pragma push_macro("fd")
#pragma push_macro("fgetc")
#pragma push_macro("fgets")
#pragma push_macro("file")
#pragma push_macro("first")
#pragma push_macro("fixed")
#pragma push_macro("flags")
#pragma push_macro("fmt")
#pragma push_macro("fn")
#pragma push_macro("fread")
#pragma push_macro("fs_abs")
#pragma push_macro("fs_abut")
#pragma push_macro("fs_armed")
#pragma push_macro("fs_block")
#pragma push_macro("fs_countdown")
#pragma push_macro("fs_due")
#pragma push_macro("fs_flags")
#pragma push_macro("fs_granule")
#pragma push_macro("fs_jump")
#pragma push_macro("fs_jump_runs")
#pragma push_macro("fs_lag")
#pragma push_macro("fs_last")
#pragma push_macro("fs_level")
#pragma push_macro("fs_low")
#pragma push_macro("fs_next")
#pragma push_macro("fs_page")
#pragma push_macro("fs_quiet")
#pragma push_macro("fs_quiet_armed")
#pragma push_macro("fs_region")
#pragma push_macro("fs_released")
#pragma push_macro("fs_run_start")
#pragma push_macro("fs_short_last")
#pragma push_macro("fs_slow")
#pragma push_macro("fs_stat")
#pragma push_macro("fs_state")
#pragma push_macro("fs_step")
#pragma push_macro("fs_streak")
#pragma push_macro("fs_sweep_at")
#pragma push_macro("fs_sweep_bytes")
#pragma push_macro("g")
#pragma push_macro("getc")
#pragma push_macro("getenv")
#pragma push_macro("got")
#pragma push_macro("h")
#pragma push_macro("hint")
#pragma push_macro("i")
#pragma push_macro("id")
#pragma push_macro("idle")
#pragma push_macro("in_parallel")
#pragma push_macro("indirect")
#pragma push_macro("init")
#pragma push_macro("j")
#pragma push_macro("k")
#pragma push_macro("la")
#pragma push_macro("last")
#pragma push_macro("lead")
#pragma push_macro("leaf")
#pragma push_macro("left")
#pragma push_macro("len")
#pragma push_macro("line")
#pragma push_macro("longindex")
#pragma push_macro("loop")
#pragma push_macro("low")
#pragma push_macro("mask")
#pragma push_macro("mode")
#pragma push_macro("most")
#pragma push_macro("n")
#pragma push_macro("n_pipes")
#pragma push_macro("n_streams")
#pragma push_macro("name")
#pragma push_macro("nest")
#pragma push_macro("next")
#pragma push_macro("now")
#pragma push_macro("nthreads")
#pragma push_macro("o")
#pragma push_macro("off")
#pragma push_macro("offset")
#pragma push_macro("omp_get_max_threads")
#pragma push_macro("omp_get_num_threads")
#pragma push_macro("omp_in_parallel")
#pragma push_macro("optarg_")
#pragma push_macro("optind_")
#pragma push_macro("optopt_")
#pragma push_macro("orig")
#pragma push_macro("p")
#pragma push_macro("p0")
#pragma push_macro("p1")
#pragma push_macro("paddr")
#pragma push_macro("page")
#pragma push_macro("part")
#pragma push_macro("path")
#pragma push_macro("pbytes")
#pragma push_macro("perm")
#pragma push_macro("phase")
#pragma push_macro("pipe")
#pragma push_macro("pipes")
#pragma push_macro("plen")
#pragma push_macro("q")
#pragma push_macro("queued")
#pragma push_macro("quiet")
#pragma push_macro("r")
#pragma push_macro("raddr")
#pragma push_macro("random")
#pragma push_macro("rbytes")
#pragma push_macro("ref")
#pragma push_macro("ref_text")
#pragma push_macro("region")
#pragma push_macro("rest")
#pragma push_macro("room")
#pragma push_macro("run")
#pragma push_macro("s")
#pragma push_macro("schedule")
#pragma push_macro("scope")
#pragma push_macro("seq")
#pragma push_macro("shift")
#pragma push_macro("short_or_held")
#pragma push_macro("site")
#pragma push_macro("sites")
#pragma push_macro("size")
#pragma push_macro("st")
#pragma push_macro("step")
#pragma push_macro("str")
#pragma push_macro("streams")
#pragma push_macro("stride")
#pragma push_macro("t")
#pragma push_macro("text")
#pragma push_macro("trail")
#pragma push_macro("unit")
#pragma push_macro("v")
#pragma push_macro("val")
#pragma push_macro("value")
#pragma push_macro("vec")
#pragma push_macro("vfscanf")
#pragma push_macro("vlen")
#pragma push_macro("volume")
#pragma push_macro("wake_at")
#pragma push_macro("whence")
#pragma push_macro("within")
#pragma push_macro("word")
#pragma push_macro("worksharing_only")
#undef a
#undef across
#undef addr
#undef advise
#undef ahead
#undef ap
#undef arg
#undef argc
#undef args
#undef argv
#undef array
#undef at
#undef b
#undef base
#undef block
#undef bounce
#undef buf
#undef bytes
#undef c
#undef cap
#undef chunk
#undef cnt
#undef cond
#undef consumed
#undef copy
#undef count
#undef d
#undef delim
#undef dir
#undef dist
#undef e
#undef f
#undef fd
#undef fgetc
#undef fgets
#undef file
#undef first
#undef fixed
#undef flags
#undef fmt
#undef fn
#undef fread
#undef fs_abs
#undef fs_abut
#undef fs_armed
#undef fs_block
#undef fs_countdown
#undef fs_due
#undef fs_flags
#undef fs_granule
#undef fs_jump
#undef fs_jump_runs
#undef fs_lag
#undef fs_last
#undef fs_level
#undef fs_low
#undef fs_next
#undef fs_page
#undef fs_quiet
#undef fs_quiet_armed
#undef fs_region
#undef fs_released
#undef fs_run_start
#undef fs_short_last
#undef fs_slow
#undef fs_stat
#undef fs_state
#undef fs_step
#undef fs_streak
#undef fs_sweep_at
#undef fs_sweep_bytes
#undef g
#undef getc
#undef getenv
#undef got
#undef h
#undef hint
#undef i
#undef id
#undef idle
#undef in_parallel
#undef indirect
#undef init
#undef j
#undef k
#undef la
#undef last
#undef lead
#undef leaf
#undef left
#undef len
#undef line
#undef longindex
#undef loop
#undef low
#undef mask
#undef mode
#undef most
#undef n
#undef n_pipes
#undef n_streams
#undef name
#undef nest
#undef next
#undef now
#undef nthreads
#undef o
#undef off
#undef offset
#undef omp_get_max_threads
#undef omp_get_num_threads
#undef omp_in_parallel
#undef optarg_
#undef optind_
#undef optopt_
#undef orig
#undef p
#undef p0
#undef p1
#undef paddr
#undef page
#undef part
#undef path
#undef pbytes
#undef perm
#undef phase
#undef pipe
#undef pipes
#undef plen
#undef q
#undef queued
#undef quiet
#undef r
#undef raddr
#undef random
#undef rbytes
#undef ref
#undef ref_text
#undef region
#undef rest
#undef room
#undef run
#undef s
#undef schedule
#undef scope
#undef seq
#undef shift
#undef short_or_held
#undef site
#undef sites
#undef size
#undef st
#undef step
#undef str
#undef streams
#undef stride
#undef t
#undef text
#undef trail
#undef unit
#undef v
#undef val
#undef value
#undef vec
#undef vfscanf
#undef vlen
#undef volume
#undef wake_at
#undef whence
#undef within
#undef word
#undef worksharing_only

#ifdef __cplusplus
extern "C" {
#endif

#define FORESIGHT_API_VERSION 1

/*
 * The binary interface between inline code compiled from this header and the library.
 * Inline code reads and writes a struct foresight_site the object itself holds, so an
 * object built against another layout must never reach the library: every library
 * symbol carries the ABI number, and an object built for an older or newer ABI finds
 * none of them (they are weak references), so its hints become no-ops instead of
 * writing past its sites.  Bump FORESIGHT__ABI whenever struct foresight_site, struct
 * foresight_stream, the nest tables, struct foresight_pt_clock or an entry point below
 * changes.
 */
#define FORESIGHT__ABI 10
#define foresight__dir foresight__dir_abi10
#define foresight__anon_site foresight__anon_site_abi10
#define foresight__prefetch_slow foresight__prefetch_slow_abi10
#define foresight__filtered_check foresight__filtered_check_abi10
#define foresight__release_slow foresight__release_slow_abi10
#define foresight__prefetch_release_slow foresight__prefetch_release_slow_abi10
#define foresight__lookahead foresight__lookahead_abi10
#define foresight__random_begin foresight__random_begin_abi10
#define foresight__random_end foresight__random_end_abi10
#define foresight__memory foresight__memory_abi10
#define foresight__stream_step foresight__stream_step_abi10
#define foresight__streams_step foresight__streams_step_abi10
#define foresight__nest_enter foresight__nest_enter_abi10
#define foresight__hinted foresight__hinted_abi10
#define foresight__pt_start foresight__pt_start_abi10
#define foresight__pt_anchor foresight__pt_anchor_abi10
#define foresight__pt_adopt foresight__pt_adopt_abi10
#define foresight__pt_offset foresight__pt_offset_abi10
#define foresight__pt_strdup foresight__pt_strdup_abi10
#define foresight__pt_wake foresight__pt_wake_abi10
#define foresight__pt_open foresight__pt_open_abi10
#define foresight__pt_lseek foresight__pt_lseek_abi10
#define foresight__pt_read foresight__pt_read_abi10
#define foresight__pt_pread foresight__pt_pread_abi10
#define foresight__pt_close foresight__pt_close_abi10
#define foresight__pt_exit foresight__pt_exit_abi10
#define foresight__pt_malloc foresight__pt_malloc_abi10
#define foresight__pt_calloc foresight__pt_calloc_abi10
#define foresight__pt_realloc foresight__pt_realloc_abi10
#define foresight__pt_free foresight__pt_free_abi10
#define foresight__pt_fopen foresight__pt_fopen_abi10
#define foresight__pt_fclose foresight__pt_fclose_abi10
#define foresight__pt_fread foresight__pt_fread_abi10
#define foresight__pt_fgetc foresight__pt_fgetc_abi10
#define foresight__pt_fgets foresight__pt_fgets_abi10
#define foresight__pt_vfscanf foresight__pt_vfscanf_abi10
#define foresight__pt_fseek foresight__pt_fseek_abi10
#define foresight__pt_fseeko foresight__pt_fseeko_abi10
#define foresight__pt_ftell foresight__pt_ftell_abi10
#define foresight__pt_ftello foresight__pt_ftello_abi10
#define foresight__pt_rewind foresight__pt_rewind_abi10
#define foresight__pt_feof foresight__pt_feof_abi10
#define foresight__pt_ferror foresight__pt_ferror_abi10
#define foresight__pt_advise foresight__pt_advise_abi10
#define foresight__pt_send foresight__pt_send_abi10
#define foresight__pt_send_vfscanf foresight__pt_send_vfscanf_abi10
#define foresight__pt_receive foresight__pt_receive_abi10
#define foresight__pt_receive_vscanf foresight__pt_receive_vscanf_abi10
#define foresight__pt_write foresight__pt_write_abi10
#define foresight__pt_vsscanf foresight__pt_vsscanf_abi10
#define foresight__pt_getline foresight__pt_getline_abi10
#define foresight__pt_fstat foresight__pt_fstat_abi10

/* Residency is tracked per 4 KiB page (x86-64 and arm64 Linux base page). */
#define FORESIGHT_PAGE_SHIFT 12
/* Two-level table: a directory entry covers 2^18 pages (1 GiB), 48-bit VA. */
#define FORESIGHT_LEAF_SHIFT 18
#define FORESIGHT_DIR_ENTRIES (1UL << (47 - FORESIGHT_PAGE_SHIFT - FORESIGHT_LEAF_SHIFT))

/*
 * A static prefetch site: one per hint in the source, so statistics can be
 * reported per site (file:line and the reference), as the paper's
 * per-instruction instrumentation did.  Declare with FORESIGHT_SITE; the
 * fields after `ref` belong to the runtime and start at zero.
 */
struct foresight_site {
    const char *file;               /* source file of the hint */
    unsigned line;                  /* source line of the hint */
    const char *ref;                /* the reference, e.g. "A[i][j]" */
    unsigned long fs_countdown;     /* filtered calls left before the next verification */
    unsigned long fs_armed;         /* what fs_countdown was last armed with */
    unsigned long fs_state;         /* registration, stream (runtime-private: internal.h) */
    struct foresight_site *fs_next; /* registry link (runtime-private) */
    unsigned long fs_stat[20];      /* counters (runtime-private) */
    unsigned long fs_quiet;         /* calls the site may skip before checking again */
    unsigned long fs_quiet_armed;   /* what fs_quiet was last armed with */
    unsigned long fs_slow;          /* calls that reached the library since arming */
    unsigned long fs_level;         /* consecutive batches found wholly resident */
};

/* Declare a static site named NAME for the reference text REF. */
#ifdef __cplusplus
#define FORESIGHT__NULL nullptr
#else
#define FORESIGHT__NULL ((void *)0)
#endif
/* Positional: a member's name could be a macro of the program's at the site. */
#define FORESIGHT_SITE(name, ref_text)                                                   \
    static struct foresight_site name = {__FILE__, __LINE__, (ref_text), 0, 0, 0,       \
                                         FORESIGHT__NULL, {0}, 0, 0, 0, 0}

/* ---- library entry points (weak: absent library means no-op hints) ----
 * Link with `foresight config --libs`: it wraps -lforesight in --no-as-needed,
 * because a program that references the library only weakly would otherwise
 * lose it under --as-needed and run with every hint silently off. */
#ifdef FORESIGHT_BUILDING_RUNTIME
#define FORESIGHT__WEAK_DATA /* the library's own definitions are strong */
#define FORESIGHT__WEAK
#else
#define FORESIGHT__WEAK_DATA __attribute__((__weak__))
/* Functions: called through the GOT where the compiler can (GCC's noplt), which the
 * loader fills at start-up, so a first hint in a signal handler does not run the lazy
 * binder there (it saves the CPU's vector state: about 2.4 KiB of a handler's stack). */
#if defined(__has_attribute) && !defined(__clang__)
#if __has_attribute(__noplt__)
#define FORESIGHT__WEAK __attribute__((__weak__, __noplt__))
#endif
#endif
#ifndef FORESIGHT__WEAK
#define FORESIGHT__WEAK __attribute__((__weak__))
#endif
#endif
extern uint64_t *const *foresight__dir FORESIGHT__WEAK_DATA;
extern struct foresight_site foresight__anon_site FORESIGHT__WEAK_DATA;
void foresight__hinted(const void *unit) FORESIGHT__WEAK;
#ifndef FORESIGHT_BUILDING_RUNTIME
/* Every unit that includes this header (every unit foresight cc gave hints) tells the
 * library as it loads that hints may come: the runtime starts with the first such unit,
 * and a program without one runs with it off; the object holding the unit is never
 * unloaded (the runtime keeps its sites) (api.c). */
__attribute__((__constructor__, __used__)) static void foresight__announce(void)
{
    if (&foresight__hinted != NULL)
        foresight__hinted((const void *)&foresight__announce);
}
#endif
void foresight__prefetch_slow(struct foresight_site *site, const void *addr, size_t bytes)
    FORESIGHT__WEAK;
void foresight__filtered_check(struct foresight_site *site, const void *addr, size_t bytes)
    FORESIGHT__WEAK;
void foresight__release_slow(struct foresight_site *site, const void *addr, size_t bytes)
    FORESIGHT__WEAK;
void foresight__prefetch_release_slow(struct foresight_site *site, const void *paddr,
                                      size_t pbytes, const void *raddr, size_t rbytes)
    FORESIGHT__WEAK;

void foresight__random_begin(struct foresight_site *site) FORESIGHT__WEAK;
void foresight__random_end(struct foresight_site *site) FORESIGHT__WEAK;

size_t foresight__lookahead(void) FORESIGHT__WEAK;
size_t foresight__memory(void) FORESIGHT__WEAK;

/* The directory, or NULL when the runtime is absent or disabled. */
static inline uint64_t *const *foresight__directory(void)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (&foresight__dir == NULL)
        return NULL;
#endif
    return __atomic_load_n(&foresight__dir, __ATOMIC_ACQUIRE);
}

/*
 * 1 when every page of [addr, addr+bytes) is marked resident and the range
 * lies within one 64-page word of the table; 0 otherwise (the library decides).
 */
static inline int foresight__marked(uint64_t *const *dir, const void *addr, size_t bytes)
{
    uintptr_t a = (uintptr_t)addr, last = a + bytes - 1;
    uintptr_t p0 = a >> FORESIGHT_PAGE_SHIFT, p1 = last >> FORESIGHT_PAGE_SHIFT;
    if (bytes == 0 || last < a || (p0 >> 6) != (p1 >> 6))
        return 0;
    uint64_t *leaf = __atomic_load_n(
        &dir[(p0 >> FORESIGHT_LEAF_SHIFT) & (FORESIGHT_DIR_ENTRIES - 1)],
        __ATOMIC_ACQUIRE); /* pairs with the leaf's publication; a plain load on x86-64 */
    if (leaf == NULL)
        return 0;
    uint64_t word = __atomic_load_n(
        &leaf[(p0 >> 6) & ((1UL << (FORESIGHT_LEAF_SHIFT - 6)) - 1)], __ATOMIC_RELAXED);
    uint64_t mask = (~(uint64_t)0 >> (63 - (p1 - p0))) << (p0 & 63);
    return (word & mask) == mask;
}

/* A filtered call: count it down; every so often the library re-checks it. */
static inline void foresight__count_filtered(struct foresight_site *site, const void *addr,
                                             size_t bytes)
{
    unsigned long left = __atomic_load_n(&site->fs_countdown, __ATOMIC_RELAXED);
    if (left == 0)
        foresight__filtered_check(site, addr, bytes);
    else
        __atomic_store_n(&site->fs_countdown, left - 1, __ATOMIC_RELAXED);
}

/* ---- the public API ---- */

/*
 * 1 when SITE's recent hints all found their pages resident, so the caller may
 * skip computing and issuing the next one (generated code asks before a hint that
 * costs loads, such as an indirect a[b[i+d]]).  After each batch of filtered
 * calls in which nothing reached the library (but calls left to the kernel's
 * read-around), the runtime lets the site skip a stretch twice as long as the last
 * (up to 64 batches); one hint that finds a page missing ends it.  Skipped calls count as considered and filtered.
 *
 * foresight_site_quiet_take() hands the caller up to MOST of the stretch at once
 * (0 when the site is not quiet), so a hot loop counts them down in a local
 * instead of storing to the shared site on every iteration (calls taken count as
 * skipped, so a caller takes no more than it can use).
 */
static inline unsigned long foresight_site_quiet_take(struct foresight_site *site,
                                                     unsigned long most)
{
    unsigned long q = __atomic_load_n(&site->fs_quiet, __ATOMIC_RELAXED);
    if (q == 0)
        return 0;
    unsigned long n = q < most ? q : most;
    __atomic_store_n(&site->fs_quiet, q - n, __ATOMIC_RELAXED);
    return n;
}

static inline int foresight_site_quiet(struct foresight_site *site)
{
    return foresight_site_quiet_take(site, 1) != 0;
}

/*
 * Prefetch [addr, addr+bytes) into memory, rounded outward to pages.  Returns
 * at once; the read happens in the background.  Pages already known resident
 * cost a bit test.  Ignored (and counted as bad input) for NULL, zero length,
 * wrapping, beyond 2^47 or wholly unmapped ranges; a large range is cut to its
 * mapped part and to what memory can hold (above); dropped when it would
 * overcommit the memory budget.
 */
static inline void foresight_prefetch_at(struct foresight_site *site, const void *addr,
                                         size_t bytes)
{
    uint64_t *const *dir = foresight__directory();
    if (dir == NULL)
        return;
    if (foresight__marked(dir, addr, bytes))
        foresight__count_filtered(site, addr, bytes);
    else
        foresight__prefetch_slow(site, addr, bytes);
}

/*
 * Release [addr, addr+bytes), rounded inward: a page not wholly inside the
 * range is never touched.  Bad input is ignored and counted as for a prefetch; a
 * large range is cut to its mapped part, then to its first 256 GiB.  Data are never
 * lost: pages are deactivated
 * (MADV_COLD) so they are reclaimed first yet can still be rescued, and paged
 * out (MADV_PAGEOUT, after writing back dirty shared file pages) only when the
 * process is over its memory budget.
 */
static inline void foresight_release_at(struct foresight_site *site, const void *addr,
                                        size_t bytes)
{
    if (foresight__directory() != NULL)
        foresight__release_slow(site, addr, bytes);
}

/*
 * Prefetch one range and release another in a single crossing, as the paper
 * bundles them in a software pipeline's steady state.
 */
static inline void foresight_prefetch_release_at(struct foresight_site *site, const void *paddr,
                                                 size_t pbytes, const void *raddr, size_t rbytes)
{
    uint64_t *const *dir = foresight__directory();
    if (dir == NULL)
        return;
    if (foresight__marked(dir, paddr, pbytes)) {
        foresight__count_filtered(site, paddr, pbytes);
        foresight__release_slow(site, raddr, rbytes);
    } else {
        foresight__prefetch_release_slow(site, paddr, pbytes, raddr, rbytes);
    }
}

/*
 * Random-access advice for SITE, whose targets are data-dependent (a[b[i]]): until
 * foresight_random_end(SCOPE), the range its prefetched targets span in a file mapping
 * is advised MADV_RANDOM, so the kernel's read-around on the faults the prefetches miss
 * does not push out the pages the loop uses; then it is advised MADV_NORMAL again.
 * Targets that a sample finds stepping through a few sequential frontiers (a scatter
 * into buckets), whose read-around windows fit in memory, are left to read-around.
 * Generated code declares SCOPE with __attribute__((__cleanup__(foresight_random_end))) at
 * loop-nest entry, so every exit from the nest ends the advice.  FORESIGHT_RANDOM=0
 * turns it off.  Whatever the advice, between the two the process is not pinned to one
 * CPU (FORESIGHT_PIN): the worker issuing the site's prefetches runs beside the program.
 */
static inline void foresight_random_begin(struct foresight_site *site,
                                          struct foresight_site **scope)
{
    if (*scope != NULL || foresight__directory() == NULL)
        return;
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (foresight__random_begin == NULL)
        return;
#endif
    foresight__random_begin(site);
    *scope = site;
}

static inline void foresight_random_end(struct foresight_site **scope)
{
    if (*scope == NULL)
        return;
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (foresight__random_end == NULL)
        return;
#endif
    foresight__random_end(*scope);
    *scope = NULL;
}

/* Untagged forms: statistics go to one shared anonymous site. */
static inline void foresight_prefetch(const void *addr, size_t bytes)
{
    if (foresight__directory() != NULL)
        foresight_prefetch_at(&foresight__anon_site, addr, bytes);
}

static inline void foresight_release(const void *addr, size_t bytes)
{
    if (foresight__directory() != NULL)
        foresight_release_at(&foresight__anon_site, addr, bytes);
}

static inline void foresight_prefetch_release(const void *paddr, size_t pbytes,
                                              const void *raddr, size_t rbytes)
{
    if (foresight__directory() != NULL)
        foresight_prefetch_release_at(&foresight__anon_site, paddr, pbytes, raddr, rbytes);
}

/*
 * Bytes a software-pipelined loop should keep prefetched ahead of its accesses
 * (FORESIGHT_LOOKAHEAD); 0 when the runtime is absent or disabled.  Code from
 * `foresight cc` divides it by a loop's bytes per iteration at loop-nest entry
 * to get the prefetch distance in iterations.
 */
static inline size_t foresight_lookahead_bytes(void)
{
    if (foresight__directory() == NULL)
        return 0;
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (&foresight__lookahead == NULL)
        return 0;
#endif
    return foresight__lookahead();
}

/*
 * The memory the runtime manages prefetches against, in bytes (FORESIGHT_MEM, else the
 * cgroup's limit, else RAM); 0 when the runtime is absent or disabled.  Code from
 * `foresight cc` compares a loop's per-iteration data volume with it at nest entry to
 * decide whether data reused across that loop is released.
 */
static inline size_t foresight_memory_bytes(void)
{
    if (foresight__directory() == NULL)
        return 0;
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (&foresight__memory == NULL)
        return 0;
#endif
    return foresight__memory();
}

/*
 * A stream of a compiled loop nest (code from `foresight cc`; usable by hand): one
 * reference whose address moves by a constant step per iteration of its pipelining
 * loop.  The loop keeps a countdown of iterations in a local and calls
 * foresight_stream_step() only when the look-ahead address leaves its granule (its site
 * is its own: a stream's site is exempt from the memory budget, so other hints through
 * the same site would be too):
 *
 *     uintptr_t cnt = 0;                                  at each entry of the loop
 *     if (cnt > 1) cnt--;                                 each iteration
 *     else cnt = foresight_stream_step(&st, &site, cnt, (uintptr_t)&a[i], rest, trail);
 *
 * The step prefetches the granule `ahead` iterations ahead (a page for strides of a page
 * or more, else a block), or on a restart (the first iteration, a jump) the whole window
 * up to it; short runs of the loop (less than a block each) hint the run that many jumps
 * ahead instead; and with FORESIGHT_STREAM_RELEASE it releases what the trailing
 * reference `trail` left a few granules behind (with FORESIGHT_STREAM_SWEEP, only once
 * one sweep of the stream has passed more than the memory limit).  `cnt` 0 marks the first iteration of a
 * run of the loop.  `rest` is the iterations the loop runs after this one
 * (FORESIGHT_STREAM_RUNS; hints then stay within the run unless runs continue one
 * another).  Addresses are plain integers: nothing is dereferenced.
 */
#define FORESIGHT_STREAM_RUNS 1u    /* `rest` is known: hints stay within the run */
#define FORESIGHT_STREAM_REGION 2u  /* pipelined across an outer loop: `region` bytes per
                                       iteration, starting `low` bytes below the address */
#define FORESIGHT_STREAM_ROWS 4u    /* runs are rows reached through row pointers: a hint
                                       passes a run's end only once runs are seen to abut */
#define FORESIGHT_STREAM_RELEASE 8u /* release behind `trail` */
#define FORESIGHT_STREAM_IDLE 16u   /* skipped by foresight_streams_step (e.g. the loop nest
                                       runs another version, pipelined across another loop) */
#define FORESIGHT_STREAM_SWEEP 32u  /* release behind `trail` once one sweep of the stream
                                       (moving one way without jumping back) has passed
                                       more than the memory limit */

struct foresight_stream {
    uintptr_t ahead;    /* the distance in iterations: set by the caller after init */
    uintptr_t volume;   /* bytes in flight per iteration, for choosing `ahead` */
    /* The rest belongs to the runtime. */
    uintptr_t fs_step, fs_abs, fs_granule, fs_page, fs_block, fs_region, fs_low, fs_lag;
    uintptr_t fs_last, fs_released, fs_run_start, fs_jump, fs_jump_runs, fs_short_last;
    uintptr_t fs_streak, fs_due, fs_sweep_at, fs_sweep_bytes;
    unsigned fs_flags;
    int fs_abut;
};

uintptr_t foresight__stream_step(struct foresight_stream *st, struct foresight_site *site,
                                 uintptr_t cnt, uintptr_t now, uintmax_t rest, uintptr_t trail)
    FORESIGHT__WEAK;
uintptr_t foresight__streams_step(struct foresight_stream *st, unsigned n,
                                  struct foresight_site *const *sites, uintptr_t cnt,
                                  const uintptr_t *at, uintmax_t rest) FORESIGHT__WEAK;

/*
 * Set up ST for a stream stepping STEP bytes per iteration (two's complement for a step
 * downwards); PAGE and BLOCK are the granules (powers of two); with
 * FORESIGHT_STREAM_REGION, REGION and LOW describe the bytes one iteration touches.
 * Sets ST->volume and ST->ahead = 1; the caller then sets ST->ahead.  Inline (a loop
 * nest entered millions of times sets its streams up each time: constants fold).
 */
static inline void foresight_stream_init(struct foresight_stream *st, uintptr_t step,
                                         size_t page, size_t block, uintptr_t region,
                                         uintptr_t low, unsigned flags)
{
    const uintptr_t a = step > UINTPTR_MAX / 2 ? (uintptr_t)0 - step : step;
    const int across = (flags & FORESIGHT_STREAM_REGION) != 0;
    /* A stride of a page or more prefetches pages; across an outer loop only where the
     * region leaves at least half of each stride untouched (dense rows go by blocks). */
    const uintptr_t g = a >= page && (!across || 2 * region <= a) ? page : block;
    /* Bytes in flight per iteration: a page for strides of a page or more (across an
     * outer loop the pages of its region), else the stride. */
    st->volume = g != page ? a : across ? (region + page - 1) & ~(uintptr_t)(page - 1) : page;
    st->ahead = 1;
    st->fs_step = step;
    st->fs_abs = a;
    st->fs_granule = g;
    st->fs_page = page;
    st->fs_block = block;
    st->fs_region = across ? region : 0;
    st->fs_low = across ? low : 0;
    /* Releases trail the reference by two granules' worth of iterations. */
    st->fs_lag = (a == 0 || a >= g) ? 1 : (2 * g + a - 1) / a;
    st->fs_last = 1;
    st->fs_released = 0;
    st->fs_run_start = 0;
    st->fs_jump = 0;
    st->fs_jump_runs = 0;
    st->fs_short_last = 1;
    st->fs_streak = 0;
    st->fs_due = 0;
    st->fs_sweep_at = 0;
    st->fs_sweep_bytes = 0;
    st->fs_flags = flags;
    st->fs_abut = 0;
}

/* One step of ST at address NOW (above); returns the iterations until the next step. */
static inline uintptr_t foresight_stream_step(struct foresight_stream *st,
                                              struct foresight_site *site, uintptr_t cnt,
                                              uintptr_t now, uintmax_t rest, uintptr_t trail)
{
    if (foresight__directory() == NULL)
        return UINTPTR_MAX;
    return foresight__stream_step(st, site, cnt, now, rest, trail);
}

/*
 * A compiled loop's countdown test, `if (FORESIGHT_COUNTING(cnt > 1)) cnt--; else ...`:
 * true but once per granule, and the C compiler is told so.  Told only "likely", gcc
 * lays out the step's call as a path taken often enough to keep the loop's `double`
 * values in memory across it (the call clobbers every SSE register): seismo's hinted
 * `detect` loop, forced on in core, took 0.231 s, 0.212 s with the probability given,
 * the original 0.199 s.
 */
#if defined(__has_builtin)
#if __has_builtin(__builtin_expect_with_probability)
#define FORESIGHT_COUNTING(cond) __builtin_expect_with_probability(!!(cond), 1, 0.9999)
#endif
#endif
#ifndef FORESIGHT_COUNTING
#define FORESIGHT_COUNTING(cond) __builtin_expect(!!(cond), 1)
#endif

/*
 * Whether stream ST's hints would do nothing on the run of its loop that starts here
 * (AT its address, REST the iterations after this one), so the loop may skip the run
 * without calling the library (foresight_streams_step): 0 no, 1 yes, 2 yes if its site
 * is quiet.  Only a stream that hints within its runs (no rows, no releases, no step
 * the library is waiting for), and either
 *   - with a stride under a granule, whose look-ahead address stays, to the run's end,
 *     in the granule hinted last: its step would do nothing (a stencil's short run per
 *     point moves the look-ahead a few bytes: NAS SP's `u[k][j][i+o]`); or
 *   - whose site is quiet (its recent hints all found their pages resident), where the
 *     run touches less than a block or may not hint past its end: the run's hints would
 *     be a restart, which a quiet site skips, and at most one more (a short run per
 *     point of a stencil: NAS SP's `u[k+o]` and `u[k][j+o]`, 7 million runs each at
 *     128 MiB).  Beside other streams, not one measuring its sweeps
 *     (FORESIGHT_STREAM_SWEEP): a run skipped this way may pass more than its window,
 *     which its next step would not count (CG's `a[k]` and `colidx[k]`).
 * Each stream of a loop is asked, so one left to the kernel or idle beside them does
 * not force a call per run: FT's copies into its line buffer (a run of 16 elements,
 * the field's stream beside it left to the kernel's readahead) called the library
 * once per run, 3% of its time with hints forced on in core.
 */
#define FORESIGHT__STREAM_STEP_DUE (1u << 11) /* the runtime's: its next step must come */
static inline int foresight__run_idle(const struct foresight_stream *st, unsigned n,
                                      uintptr_t at, uintmax_t rest)
{
    const uintptr_t a = st->fs_abs, g = st->fs_granule;
    if (a == 0 || (st->fs_flags & (FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_ROWS |
                                   FORESIGHT_STREAM_RELEASE | FORESIGHT_STREAM_IDLE |
                                   FORESIGHT__STREAM_STEP_DUE)) != FORESIGHT_STREAM_RUNS)
        return 0;
    if (a < g && rest < g) {
        const uintptr_t la = at - st->fs_low + st->ahead * st->fs_step, b = la & ~(g - 1);
        const uintptr_t room = st->fs_step < UINTPTR_MAX / 2 ? b + g - la : la - b + 1;
        if (b == st->fs_last && (uintptr_t)rest * a < room)
            return 1;
    }
    if (n > 1 && (st->fs_flags & FORESIGHT_STREAM_SWEEP))
        return 0;
    const int short_or_held = a >= g ? (uintmax_t)st->ahead > rest
                                     : rest < st->fs_block && (rest + 1) * a < st->fs_block;
    return short_or_held ? 2 : 0;
}

/*
 * The streams ST[0..N) of one loop under one countdown: the loop calls this when the
 * countdown runs out (0 where the loop starts), with AT[2k] and AT[2k+1] the current
 * and trailing addresses of stream k and SITES[k] its site; each stream due steps (as
 * foresight_stream_step), streams with FORESIGHT_STREAM_IDLE are left alone.  Returns
 * the iterations until the next stream is due (UINTPTR_MAX: none is active).
 *
 *     if (FORESIGHT_COUNTING(cnt > 1)) cnt--;
 *     else cnt = foresight_streams_step(st, 2, sites, cnt, (uintptr_t[]){...}, rest);
 */
static inline uintptr_t foresight_streams_step(struct foresight_stream *st, unsigned n,
                                               struct foresight_site *const *sites,
                                               uintptr_t cnt, const uintptr_t *at,
                                               uintmax_t rest)
{
    if (foresight__directory() == NULL)
        return UINTPTR_MAX;
    /* Streams all idle (left to the kernel's readahead, or of another version of the
     * nest): nothing to step, no call.  A CSR row loop over a mapped file restarts its
     * countdown on every row: a call per row, 1.2 million a sweep, cost a hinted SpMV
     * in memory a third of its time. */
    {
        unsigned k = 0;
        while (k < n && (st[k].fs_flags & FORESIGHT_STREAM_IDLE))
            k++;
        if (k == n)
            return UINTPTR_MAX;
    }
    /* The first step of a run in which no stream's hints would do anything
     * (foresight__run_idle): the loop skips the run, without a call.  A quiet site's
     * stretch is taken from only once the skip is sure, so a stream that forces the
     * call leaves the others' stretches for their steps. */
    if (cnt == 0) {
        unsigned k = 0, quiet = 0;
        for (; k < n; k++) {
            if (st[k].fs_flags & FORESIGHT_STREAM_IDLE)
                continue;
            const int idle = foresight__run_idle(&st[k], n, at[2 * k], rest);
            if (idle == 0 ||
                (idle == 2 && __atomic_load_n(&sites[k]->fs_quiet, __ATOMIC_RELAXED) == 0))
                break;
            quiet += idle == 2;
        }
        for (unsigned j = 0; k == n && quiet != 0 && j < n; j++)
            if (!(st[j].fs_flags & FORESIGHT_STREAM_IDLE) &&
                foresight__run_idle(&st[j], n, at[2 * j], rest) == 2 &&
                !foresight_site_quiet(sites[j]))
                k = 0; /* another thread took the stretch's end: step after all */
        if (k == n)
            return (uintptr_t)rest + 1;
    }
    return foresight__streams_step(st, n, sites, cnt, at, rest);
}

/*
 * The streams of one loop nest, set up at each entry of the nest from a table the
 * compiler writes once (static const) and a few run-time values: code `foresight cc`
 * adds per nest stays a few stores and one call, whatever the number of streams.
 *
 * Stream k (in ST[k]) belongs to pipelining loop PIPE (streams of one loop are
 * consecutive in ST) and takes VAL[4k..4k+3]: its step per iteration, its region and
 * low (with FORESIGHT_STREAM_REGION), and flags known only at run time (OR'ed to
 * FLAGS: FORESIGHT_STREAM_IDLE where another version of the nest runs,
 * FORESIGHT_STREAM_RELEASE where its data exceeds the memory).  Each loop's distance,
 * in iterations: DIST[2p] for its streams (the look-ahead bytes over the bytes in
 * flight per iteration of its streams that are not idle, halved when the loop also has
 * indirect references), DIST[2p+1] for its INDIRECT references (a page each per
 * iteration, halved likewise when it has streams); FIXED, when not 0, is both instead.
 * A stream's `ahead` is DIST[2p] (LEAD 0), DIST[2p] + DIST[2p+1] (LEAD 1: an index
 * feeding an indirect reference) or 2 DIST[2p] (LEAD 2: one whose indirect reference is
 * pipelined across another loop).
 */
struct foresight_nest_stream {
    unsigned short pipe;
    unsigned char lead;
    unsigned char flags;
};
struct foresight_nest_pipe {
    unsigned short indirect;
    uintptr_t fixed;
};
struct foresight_nest {
    const struct foresight_nest_stream *streams;
    const struct foresight_nest_pipe *pipes;
    unsigned n_streams, n_pipes;
    size_t page, block;
};

int foresight__nest_enter(const struct foresight_nest *nest, struct foresight_stream *st,
                          const uintptr_t *val, uintptr_t *dist) FORESIGHT__WEAK;

/* Sets up the nest's streams and distances (above) and returns 1: this run of the nest
 * is hinted.  0, with nothing set, when the runtime is absent or disabled, or while the
 * program's address space fits in its memory budget (hints could only cost time there;
 * FORESIGHT_INCORE=hint keeps them). */
static inline int foresight_nest_enter(const struct foresight_nest *nest,
                                       struct foresight_stream *st, const uintptr_t *val,
                                       uintptr_t *dist)
{
    if (foresight__directory() == NULL)
        return 0;
    return foresight__nest_enter(nest, st, val, dist);
}

/* 1 when the runtime is linked and enabled, so hints take effect. */
static inline int foresight_active(void)
{
    return foresight__directory() != NULL;
}

/* ---- prefetch threads (`foresight cc --prefetch-thread`) ----
 *
 * Application-specific file prefetching (Chen et al., the paper in
 * ../shared/papers/application-specific-file-prefetching.txt, Section 3): the compiler
 * slices the program's I/O code into a *prefetch thread* that runs ahead of the unchanged
 * program (the *computation thread*) and names the reads it will make, each tagged with a
 * *call ID*: the number of covered I/O calls made so far.  The computation thread counts
 * its covered calls with foresight_pt_tick(); the library drops a prediction the program
 * has already passed (expired), coalesces the rest and hands them to the kernel
 * (POSIX_FADV_WILLNEED), and keeps the thread at most FORESIGHT_PT_QUEUE calls and
 * FORESIGHT_PT_AHEAD bytes ahead, asleep otherwise.  Code from `foresight cc`:
 *
 *     static struct foresight_pt_clock *__fs_pt_clock;            NULL: no thread
 *     int main(int argc, char **argv) {
 *         __fs_pt_clock = foresight_pt_start(__fs_pt_init, __fs_pt_run);
 *         ...
 *         n = read((foresight_pt_tick(__fs_pt_clock, 3), fd), buf, 4096);
 *     }
 *     ... and in the prefetch thread's clones of the program's functions:
 *         fd = foresight_pt_open(path, O_RDONLY, 2);
 *         n = foresight_pt_read(fd, NULL, 4096, 3);             predicted: nothing read
 *
 * The prefetch thread (what it may do, whatever the slice asks):
 *   - has every signal blocked but SIGSEGV, SIGBUS, SIGFPE and SIGILL (the fault net,
 *     below), and a descriptor table of its own, empty when it starts
 *     (close_range(CLOSE_RANGE_UNSHARE)): its opens never change the numbers the program's
 *     open()s return and it keeps none of the program's files open; its handles are 3 or
 *     more, so 0, 1 and 2 (the program's stdin, stdout, stderr) are never its files;
 *   - runs under a seccomp filter of its own (the program's threads are not filtered):
 *     system calls that write or remove files, change their metadata, send signals, run
 *     programs or create processes or threads fail with EPERM, as do open/openat with any
 *     of O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND and mmap of shared writable memory;
 *     openat2 fails with ENOSYS (libc then uses openat); exit_group ends only the thread.
 *     Allowed: the setxid calls (setuid, setgid, setre*, setres*, setfs*, setgroups), which
 *     glibc makes every thread of the process call when the program calls one (it aborts
 *     the program when one thread fails), and kill(its own process, one of the four fault
 *     signals), which the fault net needs;
 *   - stores only into its own memory: its stack, its signal stack and its arena
 *     (foresight_pt_malloc & co.) lie in one reservation between two 32 GiB PROT_NONE
 *     guards, only the parts in use accessible, so a wrong index faults instead of
 *     reaching the program's memory (without the reservation, they are mappings of their
 *     own: pt_unguarded in the statistics).  None of it costs the program: under a
 *     finite RLIMIT_AS or RLIMIT_DATA there is no thread, and a program that sets one,
 *     or RLIMIT_MEMLOCK, or calls mlockall(MCL_CURRENT) (the library's setrlimit,
 *     prlimit, mlockall: the program's calls bind to them) has the thread ended and its
 *     memory unmapped first.  Its stack is
 *     RLIMIT_STACK's soft limit, as the main thread's (unlimited: 512 MiB; at least 8 MiB,
 *     at most 1 GiB), touched only as used.  It never allocates with the program's malloc,
 *     and makes no stdio call on a FILE (its streams are the library's,
 *     foresight_pt_fopen's: below);
 *   - stops, and only it, when it faults: foresight_pt_start installs, before the thread
 *     exists, handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL (SA_SIGINFO | SA_ONSTACK |
 *     SA_NODEFER) that on the prefetch thread end it (stop reason "fault (SIGSEGV at
 *     ADDR)"), and on the program's threads do what the kernel would have done without
 *     them: call the handler the program had installed before (with its flags and mask),
 *     or for SIG_DFL put SIG_DFL back and return, so that the fault kills as before (core
 *     dump included).  A handler the program installs later for one of these signals
 *     (sigaction, signal, bsd_signal, sysv_signal: the library's, which the program's
 *     calls bind to) does not replace the net: it becomes the handler the net forwards
 *     the program's faults to, and reads back as set.  Only a raw rt_sigaction system
 *     call, libc's own calls or a sanitizer's interceptor (which binds first) get past
 *     that (then a fault of the thread could run the program's handler on it: the
 *     compiler refuses a thread for files that install one).  A handler of the program that had
 *     no SA_ONSTACK runs on its thread's signal stack if that thread has one;
 *   - stops, and only it, on any error in setting it up and after 8 mispredictions in a
 *     row (the site of a call differs from the one the program made with that call ID;
 *     an anchored thread, foresight_pt_anchor, gives up that run only);
 *     FORESIGHT_STATS then says why;
 *   - is gone in a child made by fork(): the child's ticks wake nothing.
 * It ends when run() returns, on foresight_pt_exit(), or with the process (an ended thread
 * parks, blocked, rather than exit: LeakSanitizer cannot stop a thread that exits while it
 * checks at the program's exit).  Its CPU time is
 * pt_cpu_seconds in the statistics.
 */
#define FORESIGHT_PT_RING 1024
#define FORESIGHT_PT_FDS 1024 /* the program's descriptors whose readahead is turned off */
struct foresight_pt_clock {
    uint64_t id;                       /* covered I/O calls the computation thread has made */
    uint64_t wake_at;                  /* prefetch thread asleep until id reaches it; 0: awake */
    uint32_t sites[FORESIGHT_PT_RING]; /* the site of call `id` at [id % RING] */
    /* Readahead: the calls the prefetch thread has made (0 once it stopped), and per call
     * ([id % RING]) 1 when it queued that call's bytes for prefetching itself. */
    uint64_t lead;
    uint8_t queued[FORESIGHT_PT_RING];
    /* The computation thread's own: per descriptor, 1 while POSIX_FADV_RANDOM is on. */
    uint8_t random[FORESIGHT_PT_FDS];
};

#if defined(__cplusplus) || !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#define FORESIGHT__NORETURN __attribute__((__noreturn__))
#else
#define FORESIGHT__NORETURN _Noreturn
#endif

struct foresight_pt_clock *foresight__pt_start(void (*init)(void), void (*run)(void))
    FORESIGHT__WEAK;
struct foresight_pt_clock *foresight__pt_anchor(void (*init)(const void *), void (*run)(void),
                                                const void *args) FORESIGHT__WEAK;
int foresight__pt_adopt(int fd, int64_t offset) FORESIGHT__WEAK;
int64_t foresight__pt_offset(int fd) FORESIGHT__WEAK;
char *foresight__pt_strdup(const char *s) FORESIGHT__WEAK;
void foresight__pt_wake(void) FORESIGHT__WEAK;
void foresight__pt_advise(struct foresight_pt_clock *c, int fd, int random) FORESIGHT__WEAK;
int foresight__pt_open(const char *path, int flags, unsigned site) FORESIGHT__WEAK;
int64_t foresight__pt_lseek(int h, int64_t off, int whence, unsigned site) FORESIGHT__WEAK;
long foresight__pt_read(int h, void *buf, size_t n, unsigned site) FORESIGHT__WEAK;
long foresight__pt_pread(int h, void *buf, size_t n, int64_t off, unsigned site)
    FORESIGHT__WEAK;
int foresight__pt_close(int h, unsigned site) FORESIGHT__WEAK;
FORESIGHT__NORETURN void foresight__pt_exit(void) FORESIGHT__WEAK;
void *foresight__pt_malloc(size_t n) FORESIGHT__WEAK;
void *foresight__pt_calloc(size_t count, size_t n) FORESIGHT__WEAK;
void *foresight__pt_realloc(void *p, size_t n) FORESIGHT__WEAK;
void foresight__pt_free(void *p) FORESIGHT__WEAK;
FILE *foresight__pt_fopen(const char *path, const char *mode, unsigned site) FORESIGHT__WEAK;
int foresight__pt_fclose(FILE *f, unsigned site) FORESIGHT__WEAK;
size_t foresight__pt_fread(void *buf, size_t size, size_t n, FILE *f, unsigned site)
    FORESIGHT__WEAK;
int foresight__pt_fgetc(FILE *f, int lead, unsigned site) FORESIGHT__WEAK;
char *foresight__pt_fgets(char *s, int n, FILE *f, unsigned site) FORESIGHT__WEAK;
int foresight__pt_vfscanf(FILE *f, unsigned site, int *consumed, const char *fmt, va_list ap)
    FORESIGHT__WEAK;
int foresight__pt_fseek(FILE *f, long off, int whence, unsigned site) FORESIGHT__WEAK;
int foresight__pt_fseeko(FILE *f, int64_t off, int whence, unsigned site) FORESIGHT__WEAK;
long foresight__pt_ftell(FILE *f, unsigned site) FORESIGHT__WEAK;
int64_t foresight__pt_ftello(FILE *f, unsigned site) FORESIGHT__WEAK;
void foresight__pt_rewind(FILE *f, unsigned site) FORESIGHT__WEAK;
int foresight__pt_feof(FILE *f) FORESIGHT__WEAK;
int foresight__pt_ferror(FILE *f) FORESIGHT__WEAK;
long foresight__pt_write(int h, size_t n) FORESIGHT__WEAK;
int foresight__pt_vsscanf(const char *str, const char *fmt, va_list ap) FORESIGHT__WEAK;
long foresight__pt_getline(char **line, size_t *cap, FILE *f, unsigned site) FORESIGHT__WEAK;
int foresight__pt_fstat(int h, void *st) FORESIGHT__WEAK;

/*
 * Maps the prefetch thread's memory, calls INIT on the calling thread (the compiler's:
 * private copies of the I/O-related globals, which may be allocated with
 * foresight_pt_malloc), installs the fault net, then starts the prefetch thread, which
 * runs RUN.  Returns the clock the computation thread ticks, or NULL when there is no
 * thread: the library is absent, disabled (FORESIGHT_DISABLE=1, FORESIGHT_PT=0: INIT is not
 * called then), a thread was already started in this process, or it could not be created
 * (INIT has run then, unless not even its stack could be mapped).
 */
static inline struct foresight_pt_clock *foresight_pt_start(void (*init)(void),
                                                            void (*run)(void))
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (foresight__pt_start == NULL)
        return NULL;
#endif
    return foresight__pt_start(init, run);
}

/*
 * A run of the prefetch thread anchored at the entry of a function of the program that
 * reads files, for code whose main is elsewhere (a file of I/O routines compiled on its
 * own).  The first call starts the thread as foresight_pt_start does (INIT(ARGS) on the
 * calling thread first), its run (RUN) predicting from the program's next covered call
 * on.  A later call, once the thread has finished its last run (RUN returned, or gave it
 * up: mispredicted, spinning, abandoned), calls INIT(ARGS) again, on the calling thread,
 * and has the thread run RUN from the program's next call on (ARGS: the anchored
 * function's arguments, which INIT copies for RUN); while the thread's run is still going and it is behind the program, the run
 * is given up at its next covered call (the next anchor starts one), and while it is
 * level or ahead it goes on (this may be a call its run predicts: a function the
 * anchored one calls).  The thread's handles of the last run are closed before the next one.  Returns
 * the clock to tick, or NULL when there is no thread: no library, disabled, a thread
 * started by foresight_pt_start (a main of the program's own runs it), one stopped for
 * good (a fault).
 */
static inline struct foresight_pt_clock *foresight_pt_anchor(void (*init)(const void *),
                                                             void (*run)(void),
                                                             const void *args)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (foresight__pt_anchor == NULL)
        return NULL;
#endif
    return foresight__pt_anchor(init, run, args);
}

/* A copy of the program's string S in the prefetch thread's arena, for an anchored run's
 * INIT: read through the kernel (process_vm_readv), so that memory without a NUL before
 * an unmapped page, or 64 KiB, gives NULL instead of a fault; NULL for NULL. */
static inline char *foresight_pt_strdup(const char *s)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (foresight__pt_strdup == NULL)
        return 0;
#endif
    return foresight__pt_strdup(s);
}

/* The program's descriptor FD's offset (lseek(FD, 0, SEEK_CUR), errno kept), for an
 * anchored run's INIT; -1 where it has none (a pipe). */
static inline int64_t foresight_pt_offset(int fd)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (foresight__pt_offset == NULL)
        return -1;
#endif
    return foresight__pt_offset(fd);
}

/*
 * On the prefetch thread, in an anchored run: a handle of its own for the program's
 * descriptor FD (reopened from /proc, read-only), its shadow offset OFFSET (the program's
 * offset when the run was anchored; a negative one: 0); -1 when FD is not a file the
 * thread can open (a pipe, a socket, a closed descriptor).
 */
static inline int foresight_pt_adopt(int fd, int64_t offset)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (foresight__pt_adopt == NULL)
        return -1;
#endif
    return foresight__pt_adopt(fd, offset);
}

/*
 * The computation thread is about to make its next covered I/O call, at SITE: advances
 * the call ID.  NULL C: no thread.  About one relaxed store; a futex wake only when the
 * prefetch thread sleeps until this call.
 */
static inline void foresight_pt_tick(struct foresight_pt_clock *c, unsigned site)
{
    if (c == NULL)
        return;
    uint64_t id = __atomic_load_n(&c->id, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&c->sites[id % FORESIGHT_PT_RING], site, __ATOMIC_RELAXED);
    __atomic_store_n(&c->id, id, __ATOMIC_RELEASE);
    if (__builtin_expect(__atomic_load_n(&c->wake_at, __ATOMIC_RELAXED) == id, 0))
        foresight__pt_wake();
}

/*
 * foresight_pt_tick for a read or pread of the program's descriptor FD, which it returns
 * (the compiler passes the call's first argument through it).  While the prefetch thread
 * has queued this call's bytes itself, the kernel's readahead on FD is off
 * (POSIX_FADV_RANDOM: it would read pages the thread did not ask for); when the thread
 * left the call to readahead, lags, or has stopped, it is on again (POSIX_FADV_NORMAL).
 * A system call only when that changes.  Not used in files that give descriptors advice
 * of their own.
 */
static inline int foresight_pt_tick_fd(struct foresight_pt_clock *c, unsigned site, int fd)
{
    if (c == NULL)
        return fd;
    foresight_pt_tick(c, site);
    if ((unsigned)fd >= FORESIGHT_PT_FDS)
        return fd;
    const uint64_t id = __atomic_load_n(&c->id, __ATOMIC_RELAXED);
    const int random = __atomic_load_n(&c->lead, __ATOMIC_ACQUIRE) >= id &&
                       __atomic_load_n(&c->queued[id % FORESIGHT_PT_RING], __ATOMIC_RELAXED);
    if (__builtin_expect(random != c->random[fd], 0))
        foresight__pt_advise(c, fd, random);
    return fd;
}

/*
 * The prefetch thread's I/O (only on that thread, which exists only when the library
 * started it; elsewhere the calls fail with EPERM).  Handles are the thread's own
 * descriptors.  SITE is the call's site, the number the computation thread ticks with.
 *
 * foresight_pt_open: opens PATH for reading (O_RDONLY|O_CLOEXEC whatever FLAGS say: the
 *   thread only reads); -1 with errno when it cannot (the slice's error path then runs).
 *   The handle is 3 or more.  Its reads are prefetched when it is a regular file of 2 MiB
 *   or more or matches FORESIGHT_PT_FILES.  FLAGS are the program's: when they hold
 *   O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or O_APPEND, or another handle of the same file
 *   (device, inode) was opened so, or the file's mtime or size changes between two lead
 *   reads (looked at before each), the program writes the file: from then on each lead
 *   read waits until the program makes the same call (read after write: every write the
 *   program makes before it is done; -1/EIO where the program's call came from another
 *   site), its predicted reads go on without waiting.
 * foresight_pt_lseek: moves the handle's shadow offset (SEEK_SET, SEEK_CUR, SEEK_END);
 *   -1/EINVAL for a negative result or another WHENCE.  Not a covered call.
 * foresight_pt_read(h, NULL, n): a predicted read at the shadow offset: returns the bytes
 *   the file has there, at most N, moves the offset by them, transfers nothing, and
 *   queues them for prefetching.  With a buffer (private memory): a lead read, whose data
 *   the slice needs: pread(2) into BUF at the shadow offset.  One covered call either way.
 * foresight_pt_pread: the same at OFF, the offset unmoved.
 * foresight_pt_close: issues the handle's queued predictions and closes it.
 * Unknown handle (0, 1 and 2 among them): -1/EBADF.
 * Sequential forward predictions are left to the kernel's readahead: per handle, once 32
 * predictions in a row each start where the previous one ended, the following ones are not
 * issued while that holds (pt_left_to_readahead in the statistics); any other prediction
 * ends the run.  Backward and strided runs are issued.
 */
static inline int foresight_pt_open(const char *path, int flags, unsigned site)
{
    return foresight__pt_open(path, flags, site);
}

static inline int64_t foresight_pt_lseek(int h, int64_t off, int whence, unsigned site)
{
    return foresight__pt_lseek(h, off, whence, site);
}

static inline long foresight_pt_read(int h, void *buf, size_t n, unsigned site)
{
    return foresight__pt_read(h, buf, n, site);
}

static inline long foresight_pt_pread(int h, void *buf, size_t n, int64_t off, unsigned site)
{
    return foresight__pt_pread(h, buf, n, off, site);
}

static inline int foresight_pt_close(int h, unsigned site)
{
    return foresight__pt_close(h, site);
}

/*
 * The prefetch thread's stdio (only on that thread; elsewhere they fail with EPERM and
 * feof/ferror say 1).  The thread makes no stdio call of libc: the FILE * these return is
 * a stream of the library's, on a handle of foresight_pt_open, and every call first checks
 * that its FILE * is one, by its address alone.  Any other (stdin, a copy of one of the
 * program's) is never read through: it reads as an empty stream in error (fread 0, fgetc
 * EOF, fgets NULL, fscanf EOF, feof and ferror 1; fseek, ftell -1/EBADF).
 *
 * Covered calls, one call ID each, as foresight_pt_read: fread, fgets, getline, fscanf (the
 * program ticks once per call, whatever it returns).  Not covered: fgetc (the program does not
 * tick getc), fopen, fclose, fseek, fseeko, ftell, ftello, rewind, feof, ferror.
 *
 * foresight_pt_fopen: foresight_pt_open(PATH, O_RDONLY) for a MODE that only reads ("r",
 *   "rb", with glibc's e, m, x, c or ,ccs=), foresight_pt_open(PATH, O_RDWR) for any other
 *   (the program writes the file: its lead fread waits for the program's call, its
 *   fgets, getline, fscanf and lead fgetc fail, above); NULL with errno when that fails.
 * foresight_pt_fread(NULL, size, n): a predicted read of SIZE*N bytes at the shadow offset;
 *   returns the whole items the file has there, the offset moved by every byte it has.
 *   With BUF (private memory): a lead read, pread(2) into BUF.
 * foresight_pt_fgetc(f, 0): predicted: moves the offset by one byte and returns 0, or EOF
 *   at the end of the file; no call ID, no prediction (the program's stdio refills its
 *   buffer with reads the kernel's readahead serves).  LEAD nonzero: the byte.
 * foresight_pt_fgets: fgets(3) on the file's text: always a lead read.
 * foresight_pt_fscanf(f, site, &n, FMT "%n", ..., &n): the compiler appends %n to the
 *   program's format and passes CONSUMED as its argument too.  The library sets *CONSUMED
 *   to -1, runs vsscanf on its copy of the file's text at the shadow offset, and moves the
 *   offset by *CONSUMED; returns what vsscanf did (EOF at the end of the file).  A match
 *   that stops before the %n leaves the program's offset unknown: the stream is *lost*
 *   then, for good (ferror 1, its reads empty, fseek and ftell -1/EIO, no predictions), as
 *   it is for a format vsscanf could allocate for (m, a, I, ', wide or non-ASCII
 *   directives) and for a match that runs past what the library's copy can show (a field
 *   of 1000 bytes or more, more than the 64 KiB it holds, a NUL byte of the file);
 *   *CONSUMED is -1 whenever the stream is lost.
 * Lead fgetc, fgets and fscanf read the file's text 64 KiB at a time: each such read is
 *   one lead read in the statistics.
 * foresight_pt_fseek, _fseeko, _rewind: move the shadow offset as foresight_pt_lseek and
 *   clear end of file; foresight_pt_ftell, _ftello: the shadow offset.
 * foresight_pt_feof: 1 once a read hit the end of the file (or the stream is lost);
 *   foresight_pt_ferror: 1 when it is lost, or a lead fgets, getline, fscanf or fgetc of
 *   it failed because the program writes the file (errno EIO; the offset unmoved, the
 *   stream not lost, its predicted reads go on; a lead fread waits for the program's
 *   call instead, as foresight_pt_read does).  foresight_pt_fclose: foresight_pt_close.
 */
static inline FILE *foresight_pt_fopen(const char *path, const char *mode, unsigned site)
{
    return foresight__pt_fopen(path, mode, site);
}

static inline int foresight_pt_fclose(FILE *f, unsigned site)
{
    return foresight__pt_fclose(f, site);
}

static inline size_t foresight_pt_fread(void *buf, size_t size, size_t n, FILE *f,
                                        unsigned site)
{
    return foresight__pt_fread(buf, size, n, f, site);
}

static inline int foresight_pt_fgetc(FILE *f, int lead, unsigned site)
{
    return foresight__pt_fgetc(f, lead, site);
}

static inline char *foresight_pt_fgets(char *s, int n, FILE *f, unsigned site)
{
    return foresight__pt_fgets(s, n, f, site);
}

/* getline(3) on the thread: a covered call, always a lead read; *LINE grows in the
 * thread's arena (it is the thread's own: NULL, or from foresight_pt_malloc). */
static inline long foresight_pt_getline(char **line, size_t *cap, FILE *f, unsigned site)
{
    return foresight__pt_getline(line, cap, f, site);
}

static inline __attribute__((__format__(__scanf__, 4, 5))) int
foresight_pt_fscanf(FILE *f, unsigned site, int *consumed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int r = foresight__pt_vfscanf(f, site, consumed, fmt, ap);
    va_end(ap);
    return r;
}

static inline int foresight_pt_fseek(FILE *f, long off, int whence, unsigned site)
{
    return foresight__pt_fseek(f, off, whence, site);
}

static inline int foresight_pt_fseeko(FILE *f, int64_t off, int whence, unsigned site)
{
    return foresight__pt_fseeko(f, off, whence, site);
}

static inline long foresight_pt_ftell(FILE *f, unsigned site)
{
    return foresight__pt_ftell(f, site);
}

static inline int64_t foresight_pt_ftello(FILE *f, unsigned site)
{
    return foresight__pt_ftello(f, site);
}

static inline void foresight_pt_rewind(FILE *f, unsigned site)
{
    foresight__pt_rewind(f, site);
}

static inline int foresight_pt_feof(FILE *f)
{
    return foresight__pt_feof(f);
}

static inline int foresight_pt_ferror(FILE *f)
{
    return foresight__pt_ferror(f);
}

/* The prefetch thread's fstat and fstat64 of one of its handles (its ST a struct stat or
 * stat64: one layout on 64-bit Linux), by the system call: libc's, under ThreadSanitizer,
 * takes the thread's descriptor for the program's of the same number (the thread's table
 * is its own) and reports a race.  -1/EBADF for what is not its handle; elsewhere than on
 * the thread, -1/EPERM; -1 with a library older than this entry point. */
static inline int foresight_pt_fstat(int h, void *st)
{
    if (!foresight__pt_fstat)
        return -1; /* a library from before it: the thread takes its error path */
    return foresight__pt_fstat(h, st);
}

/*
 * The channel (pt_chan.c; the paper's sync points and send_XXX/receive_XXX): values the
 * prefetch thread needs but must not produce itself, since a second call would change the
 * program (rand's sequence, the bytes of standard input) or answer differently (time).
 * The computation thread makes the call as before and sends what it got; the prefetch
 * thread's copy of the call waits for that message instead (it cannot run ahead of such a
 * call, only between them).  The compiler pairs them by site:
 *
 *     program:  r = foresight_pt_send_int(__fs_pt_clock, 2, rand());
 *               if (foresight_pt_send_scanf(__fs_pt_clock, 3, "%ld", &rec) != 1) ...
 *     thread:   r = foresight_pt_chan_int(2);
 *               if (foresight_pt_chan_scanf(3, "%ld", &rec) != 1) ...
 *
 * Sending never waits and never fails the call: NULL C (no thread) sends nothing; a message
 * that does not fit the channel (1 MiB: the thread lags that far) closes it and the thread
 * stops once it has taken what came before; so does a message from another site than the
 * thread's (the slice went another way), and a scanf conversion whose stores the channel
 * does not size (%n, %m, positional or wide ones).  A scanf's message holds its result and
 * the bytes each assigning conversion stored (strings up to their NUL).  Values of time_t,
 * clock_t and ssize_t travel as long (LP64 Linux).  Receiving is the thread's alone.
 */
void foresight__pt_send(struct foresight_pt_clock *c, unsigned site, const void *value,
                        size_t vlen, const void *part, size_t plen) FORESIGHT__WEAK;
int foresight__pt_send_vfscanf(struct foresight_pt_clock *c, unsigned site, FILE *f,
                               const char *fmt, va_list ap) FORESIGHT__WEAK;
/* The value into VALUE, the part (if the message has one) into PART, at most CAP bytes:
 * returns the bytes copied, -1 when the message has no part. */
long foresight__pt_receive(unsigned site, void *value, size_t vlen, void *part, size_t cap)
    FORESIGHT__WEAK;
int foresight__pt_receive_vscanf(unsigned site, va_list ap) FORESIGHT__WEAK;

static inline int foresight_pt_send_int(struct foresight_pt_clock *c, unsigned site, int v)
{
    if (c != NULL)
        foresight__pt_send(c, site, &v, sizeof v, NULL, 0);
    return v;
}

static inline long foresight_pt_send_long(struct foresight_pt_clock *c, unsigned site, long v)
{
    if (c != NULL)
        foresight__pt_send(c, site, &v, sizeof v, NULL, 0);
    return v;
}

static inline double foresight_pt_send_double(struct foresight_pt_clock *c, unsigned site,
                                              double v)
{
    if (c != NULL)
        foresight__pt_send(c, site, &v, sizeof v, NULL, 0);
    return v;
}

/* A call that stores its result's object through a pointer (gettimeofday, clock_gettime:
 * the compiler passes the call's result R, the pointer P and the object's SIZE): R, and
 * the object as the call left it (none for a null P). */
static inline long foresight_pt_send_out(struct foresight_pt_clock *c, unsigned site, long r,
                                         const void *p, unsigned long size)
{
    if (c != NULL)
        foresight__pt_send(c, site, &r, sizeof r, p, p != NULL ? size : 0);
    return r;
}

/* fgets(s, n, stdin)'s result R: whether there was a line, and the line. */
static inline char *foresight_pt_send_fgets(struct foresight_pt_clock *c, unsigned site,
                                            char *r)
{
    if (c != NULL) {
        const int got = r != NULL;
        foresight__pt_send(c, site, &got, sizeof got, r, r != NULL ? __builtin_strlen(r) + 1 : 0);
    }
    return r;
}

/* read(fd, buf, n) made as FN(FD, BUF, N): its result and the bytes it read. */
static inline long foresight_pt_send_read(struct foresight_pt_clock *c, unsigned site,
                                          long (*fn)(int, void *, size_t), int fd, void *buf,
                                          size_t n)
{
    const long r = fn(fd, buf, n);
    if (c != NULL) /* errno as read left it */
        foresight__pt_send(c, site, &r, sizeof r, r > 0 ? buf : NULL, r > 0 ? (size_t)r : 0);
    return r;
}

/* The channel's messages of standard input read through a variable (a stream, or a
 * descriptor, that may be stdin): the site, with this bit. */
#define FORESIGHT_PT_STDIN_SITE 0x80000000u

/* read(fd, buf, n) where the descriptor may be standard input (`int in = argc > 1 ?
 * open(argv[1], O_RDONLY) : 0`), the program's own call (fortified where it is built so):
 *
 *     foresight_pt_fd_sent(CLOCK, SITE, read(foresight_pt_fd_tick(CLOCK, SITE, ADVISE, fd),
 *                                            foresight_pt_fd_buf(buf), n))
 *
 * ticks it (through foresight_pt_tick_fd where ADVISE), notes its descriptor and buffer,
 * and, when the descriptor is 0, sends what it read to the thread, whose copy of the call,
 * on descriptor 0 too (never one of its own), takes it from the channel.  (The notes are
 * the program's one I/O thread's: the compiler refuses a thread to programs of several.) */
static int foresight__pt_fd_noted __attribute__((__unused__)) = -1;
/* The buffer as an integer: kept as a pointer in a file-scope variable, GCC 12 at -O2
 * compiled the program's use of the buffer after each read slower (a checksum of each
 * 4 KiB frame after its read, in core: 0.68-0.70 s against 0.64-0.67 s as an integer,
 * the original 0.62-0.63 s; docs/results.md, prefetch threads). */
static uintptr_t foresight__pt_buf_noted __attribute__((__unused__));

static inline int foresight_pt_fd_tick(struct foresight_pt_clock *c, unsigned site, int advise,
                                       int fd)
{
    if (advise)
        foresight_pt_tick_fd(c, site, fd);
    else
        foresight_pt_tick(c, site);
    foresight__pt_fd_noted = fd;
    return fd;
}

static inline void *foresight_pt_fd_buf(void *buf)
{
    foresight__pt_buf_noted = (uintptr_t)buf;
    return buf;
}

static inline long foresight_pt_fd_sent(struct foresight_pt_clock *c, unsigned site, long r)
{
    if (c != NULL && foresight__pt_fd_noted == 0)
        foresight__pt_send(c, site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r,
                           r > 0 ? (const void *)foresight__pt_buf_noted : NULL,
                           r > 0 ? (size_t)r : 0);
    return r;
}

/* fread(buf, size, n, stdin) made as FN(BUF, SIZE, N, F): its result and the items read. */
static inline unsigned long foresight_pt_send_fread(struct foresight_pt_clock *c, unsigned site,
                                                    unsigned long (*fn)(void *, size_t, size_t,
                                                                        FILE *),
                                                    void *buf, size_t size, size_t n, FILE *f)
{
    const unsigned long r = fn(buf, size, n, f);
    if (c != NULL) {
        const long v = (long)r;
        foresight__pt_send(c, site, &v, sizeof v, r > 0 && size > 0 ? buf : NULL, r * size);
    }
    return r;
}

/* getline(line, n, stdin) made as FN(LINE, N, F): its result and the line read. */
static inline long foresight_pt_send_getline(struct foresight_pt_clock *c, unsigned site,
                                             long (*fn)(char **, size_t *, FILE *), char **line,
                                             size_t *n, FILE *f)
{
    const long r = fn(line, n, f);
    if (c != NULL)
        foresight__pt_send(c, site, &r, sizeof r, r > 0 ? *line : NULL,
                           r > 0 ? (size_t)r + 1 : 0);
    return r;
}

/*
 * The program's stdio reads through a stream variable that may be standard input (`FILE
 * *in = argc > 1 ? fopen(argv[1], "r") : stdin`): the call, ticked where it is a covered
 * one, and, when the stream is stdin, what it read sent to the thread (whose copy of the
 * call, on stdin too, takes it: pt_stdio.c), as a message of site | FORESIGHT_PT_STDIN_SITE.
 */

static inline char *foresight_pt_stdio_fgets(struct foresight_pt_clock *c, unsigned site,
                                             char *s, int n, FILE *f)
{
    foresight_pt_tick(c, site);
    char *r = fgets(s, n, f);
    if (c != NULL && f == stdin) {
        const int got = r != NULL;
        foresight__pt_send(c, site | FORESIGHT_PT_STDIN_SITE, &got, sizeof got, r,
                           r != NULL ? __builtin_strlen(r) + 1 : 0);
    }
    return r;
}

static inline unsigned long foresight_pt_stdio_fread(struct foresight_pt_clock *c, unsigned site,
                                                     void *buf, size_t size, size_t n, FILE *f)
{
    foresight_pt_tick(c, site);
    const unsigned long r = fread(buf, size, n, f);
    if (c != NULL && f == stdin) {
        const long v = (long)r;
        foresight__pt_send(c, site | FORESIGHT_PT_STDIN_SITE, &v, sizeof v,
                           r > 0 && size > 0 ? buf : NULL, r * size);
    }
    return r;
}

static inline long foresight_pt_stdio_getline(struct foresight_pt_clock *c, unsigned site,
                                              long (*fn)(char **, size_t *, FILE *), char **line,
                                              size_t *n, FILE *f)
{
    foresight_pt_tick(c, site);
    const long r = fn(line, n, f);
    if (c != NULL && f == stdin)
        foresight__pt_send(c, site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r,
                           r > 0 ? *line : NULL, r > 0 ? (size_t)r + 1 : 0);
    return r;
}

/* getc and fgetc are mirrored, not covered: no tick. */
static inline int foresight_pt_stdio_fgetc(struct foresight_pt_clock *c, unsigned site, FILE *f)
{
    const int r = fgetc(f);
    if (c != NULL && f == stdin)
        foresight__pt_send(c, site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r, NULL, 0);
    return r;
}

static inline int foresight_pt_stdio_getc(struct foresight_pt_clock *c, unsigned site, FILE *f)
{
    const int r = getc(f);
    if (c != NULL && f == stdin)
        foresight__pt_send(c, site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r, NULL, 0);
    return r;
}

#if defined(__GNUC__) && !defined(__clang__)
#define FORESIGHT__VFSCANF __builtin_vfscanf /* declared in C89 mode too */
#else
#define FORESIGHT__VFSCANF vfscanf
#endif

static inline __attribute__((__format__(__scanf__, 4, 5))) int
foresight_pt_send_fscanf(struct foresight_pt_clock *c, unsigned site, FILE *f, const char *fmt,
                         ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = c != NULL ? foresight__pt_send_vfscanf(c, site, f, fmt, ap)
                  : FORESIGHT__VFSCANF(f, fmt, ap);
    va_end(ap);
    return r;
}

static inline __attribute__((__format__(__scanf__, 4, 5))) int
foresight_pt_stdio_fscanf(struct foresight_pt_clock *c, unsigned site, FILE *f, const char *fmt,
                          ...)
{
    va_list ap;
    int r;
    foresight_pt_tick(c, site);
    va_start(ap, fmt);
    r = c != NULL && f == stdin
            ? foresight__pt_send_vfscanf(c, site | FORESIGHT_PT_STDIN_SITE, f, fmt, ap)
            : FORESIGHT__VFSCANF(f, fmt, ap);
    va_end(ap);
    return r;
}

static inline __attribute__((__format__(__scanf__, 3, 4))) int
foresight_pt_send_scanf(struct foresight_pt_clock *c, unsigned site, const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = c != NULL ? foresight__pt_send_vfscanf(c, site, stdin, fmt, ap)
                  : FORESIGHT__VFSCANF(stdin, fmt, ap);
    va_end(ap);
    return r;
}

static inline int foresight_pt_chan_int(unsigned site)
{
    int v = 0;
    foresight__pt_receive(site, &v, sizeof v, NULL, 0);
    return v;
}

static inline long foresight_pt_chan_long(unsigned site)
{
    long v = 0;
    foresight__pt_receive(site, &v, sizeof v, NULL, 0);
    return v;
}

static inline double foresight_pt_chan_double(unsigned site)
{
    double v = 0;
    foresight__pt_receive(site, &v, sizeof v, NULL, 0);
    return v;
}

/* time(T) on the thread: the program's value, stored through T too. */
static inline long foresight_pt_chan_time(unsigned site, long *t)
{
    const long v = foresight_pt_chan_long(site);
    if (t != NULL)
        *t = v;
    return v;
}

/* gettimeofday(TV, TZ) and clock_gettime(CLK, TS) on the thread: the program's result, and
 * the object it got stored through TV or TS (P: SIZE bytes; the compiler passes 0 for a
 * null pointer).  TZ and CLK (Q, N) are not used. */
static inline int foresight_pt_chan_out0(unsigned site, unsigned long size, void *p,
                                         const void *q)
{
    long r = -1;
    (void)q;
    foresight__pt_receive(site, &r, sizeof r, p, p != NULL ? size : 0);
    return (int)r;
}

static inline int foresight_pt_chan_out1(unsigned site, unsigned long size, long n, void *p)
{
    long r = -1;
    (void)n;
    foresight__pt_receive(site, &r, sizeof r, p, p != NULL ? size : 0);
    return (int)r;
}

static inline char *foresight_pt_chan_fgets(char *s, int n, unsigned site)
{
    int got = 0;
    const long len = foresight__pt_receive(site, &got, sizeof got, s, n > 0 ? (size_t)n : 0);
    if (!got || n <= 0)
        return NULL;
    if (len >= n) /* cut short: still a string */
        s[n - 1] = '\0';
    return s;
}

static inline long foresight_pt_chan_read(unsigned site, void *buf, size_t n)
{
    long r = -1;
    foresight__pt_receive(site, &r, sizeof r, buf, n);
    return r;
}

static inline unsigned long foresight_pt_chan_fread(void *buf, size_t size, size_t n,
                                                    unsigned site)
{
    long r = 0;
    const size_t cap = size != 0 && n <= SIZE_MAX / size ? size * n : 0;
    foresight__pt_receive(site, &r, sizeof r, buf, cap);
    return r > 0 ? (unsigned long)r : 0;
}

/* getline on the thread: the program's line, in a buffer of the thread's arena grown as
 * getline grows its own (lines of up to FORESIGHT_PT_LINE bytes; longer ones are cut). */
#define FORESIGHT_PT_LINE (1u << 20)
static inline long foresight_pt_chan_getline(char **line, size_t *n, unsigned site)
{
    static char *bounce;
    if (bounce == NULL)
        bounce = (char *)foresight__pt_malloc(FORESIGHT_PT_LINE);
    long r = -1;
    const long got =
        foresight__pt_receive(site, &r, sizeof r, bounce, bounce != NULL ? FORESIGHT_PT_LINE : 0);
    if (r <= 0 || got <= 0 || line == NULL || n == NULL)
        return r;
    const size_t len = (size_t)got;
    if (*line == NULL || *n < len) {
        char *p = (char *)foresight__pt_realloc(*line, len);
        if (p == NULL)
            return -1;
        *line = p;
        *n = len;
    }
    __builtin_memcpy(*line, bounce, len);
    (*line)[len - 1] = '\0';
    return r;
}

static inline int foresight_pt_chan_scanf(unsigned site, const char *fmt, ...)
{
    va_list ap;
    int r;
    (void)fmt;
    va_start(ap, fmt);
    r = foresight__pt_receive_vscanf(site, ap);
    va_end(ap);
    return r;
}

/*
 * getopt (and getopt_long, getopt_long_only) as a sync point.  The program's call runs as
 * always; what it left behind is sent: its result, optind, optopt, *LONGINDEX (getopt_long's
 * index of the option found; NULL for none), where optarg points (argument J of main's
 * argv at byte OFF, or its bytes where it points elsewhere, cut at FORESIGHT_PT_GETOPT_TEXT)
 * and, with the last result (-1), the order of main's argv, which GNU getopt permutes
 * (non-options move to the end).  The thread's copy of the call takes these into its own
 * optarg, optind and optopt (the compiler renames them in the thread's code) and puts its
 * own copy of argv in the same order.  AT is the program's argv array, ORIG its pointers
 * as main got them (ARGC of them, copied before main's first statement), VEC the
 * vector the call was given (NULL: not known); COPY the thread's strings in the original
 * order, ARGV the thread's array.  A call on another vector than main's argv, or an argv
 * of more than FORESIGHT_PT_GETOPT_ARGS entries, stops the thread (it could not follow).
 * The work is O(1) per call but the last, which is O(argc) for getopt's permutations.
 */
#define FORESIGHT_PT_GETOPT_ARGS 16384
#define FORESIGHT_PT_GETOPT_TEXT 4096
struct foresight_pt_getopt_part {
    int32_t arg, off; /* optarg's argument (-1: elsewhere, -2: NULL) and offset */
    int32_t n;        /* entries of perm; -1: the thread cannot follow */
    int32_t perm[FORESIGHT_PT_GETOPT_ARGS];
    char text[FORESIGHT_PT_GETOPT_TEXT];
};

/* Where P (one of AT's pointers) is in ORIG, of N entries, looking from HINT on first. */
static inline int32_t foresight__pt_argv_index(char *const *orig, size_t n, const char *p,
                                               size_t hint)
{
    for (size_t k = hint; k < n; k++)
        if (orig[k] == p)
            return (int32_t)k;
    for (size_t k = 0; k < hint && k < n; k++)
        if (orig[k] == p)
            return (int32_t)k;
    return -1;
}

static inline int foresight_pt_send_getopt(struct foresight_pt_clock *c, unsigned site, int r,
                                           const int *longindex, char *const *vec,
                                           const char *optarg_, int optind_, int optopt_,
                                           char *const *at, char *const *orig, size_t argc)
{
    if (c == NULL)
        return r;
    struct foresight_pt_getopt_part p;
    const int v[4] = {r, optind_, optopt_, longindex != NULL ? *longindex : 0};
    const size_t n = at != NULL && orig != NULL ? argc : 0;
    p.arg = optarg_ == NULL ? -2 : -1;
    p.off = 0;
    p.n = 0;
    if (at == NULL || (vec != NULL && vec != at) || n > FORESIGHT_PT_GETOPT_ARGS)
        p.n = -1;
    /* optarg: in the argument just taken (`-s5`, `-s 5`), else anywhere in argv. */
    for (int d = 1; p.arg == -1 && p.n >= 0 && d <= 2; d++) {
        if (optind_ - d < 0 || (size_t)(optind_ - d) >= n)
            continue;
        const char *a = at[optind_ - d];
        const uintptr_t o = (uintptr_t)optarg_, s = (uintptr_t)a;
        if (o >= s && o - s <= __builtin_strlen(a)) {
            p.arg = foresight__pt_argv_index(orig, n, a, (size_t)(optind_ - d));
            p.off = (int32_t)(o - s);
        }
    }
    for (size_t k = 0; p.arg == -1 && p.n >= 0 && k < n; k++) {
        const uintptr_t o = (uintptr_t)optarg_, s = (uintptr_t)orig[k];
        if (o >= s && o - s <= __builtin_strlen(orig[k])) {
            p.arg = (int32_t)k;
            p.off = (int32_t)(o - s);
        }
    }
    if (r == -1 && p.n == 0) {
        /* The order getopt left: two runs of ORIG's order merged (options, then the
         * rest), so each is found a step or two after the previous one. */
        size_t hint = 0;
        for (size_t i = 0; i < n; i++) {
            const int32_t j =
                at[i] == orig[i] ? (int32_t)i : foresight__pt_argv_index(orig, n, at[i], hint);
            p.perm[i] = j;
            hint = j >= 0 ? (size_t)j + 1 : hint;
        }
        p.n = (int32_t)n;
    }
    size_t len = 0;
    if (p.arg == -1) {
        len = __builtin_strlen(optarg_);
        if (len > FORESIGHT_PT_GETOPT_TEXT - 1)
            len = FORESIGHT_PT_GETOPT_TEXT - 1;
        __builtin_memcpy(p.text, optarg_, len);
        p.text[len++] = '\0';
    }
    /* (the text, where there is one, after the whole of perm) */
    foresight__pt_send(c, site, v, sizeof v, &p,
                       len ? offsetof(struct foresight_pt_getopt_part, text) + len
                           : offsetof(struct foresight_pt_getopt_part, perm) +
                                 (size_t)(p.n > 0 ? p.n : 0) * sizeof p.perm[0]);
    return r;
}

static inline int foresight_pt_chan_getopt(unsigned site, int *longindex, char **optarg_,
                                           int *optind_, int *optopt_, char **argv,
                                           char *const *copy, size_t argc)
{
    struct foresight_pt_getopt_part p;
    int v[4] = {-1, 1, '?', 0};
    const long got = foresight__pt_receive(site, v, sizeof v, &p, sizeof p);
    *optind_ = v[1];
    *optopt_ = v[2];
    if (longindex != NULL)
        *longindex = v[3];
    *optarg_ = NULL;
    if (got < (long)offsetof(struct foresight_pt_getopt_part, perm))
        return v[0];
    if (p.n < 0)
        foresight__pt_exit(); /* another vector, or too long an argv: it cannot follow */
    const size_t n = copy != NULL ? argc : 0;
    if (p.n > FORESIGHT_PT_GETOPT_ARGS ||
        got < (long)(offsetof(struct foresight_pt_getopt_part, perm) +
                     (size_t)p.n * sizeof p.perm[0]))
        return v[0];
    if (argv != NULL && p.n > 0 && (size_t)p.n == n)
        for (int32_t i = 0; i < p.n; i++)
            if (p.perm[i] >= 0 && p.perm[i] < p.n)
                argv[i] = copy[p.perm[i]];
    if (p.arg >= 0 && (size_t)p.arg < n && p.off >= 0 &&
        (size_t)p.off <= __builtin_strlen(copy[p.arg]))
        *optarg_ = copy[p.arg] + p.off;
    else if (p.arg == -1 && got > (long)offsetof(struct foresight_pt_getopt_part, text)) {
        const size_t len = (size_t)got - offsetof(struct foresight_pt_getopt_part, text);
        char *s = (char *)foresight__pt_malloc(len);
        if (s != NULL) {
            __builtin_memcpy(s, p.text, len);
            s[len - 1] = '\0';
            *optarg_ = s;
        }
    }
    return v[0];
}

/*
 * The program's writes, as the prefetch thread makes them: it writes nothing, and predicts
 * that each write succeeds whole (a program whose write fails takes another way, which the
 * thread then mispredicts).  They stand where the slice needs a write's result (`if
 * (write(out, buf, n) != n) return 1;`); the data is never passed.
 * foresight_pt_write also moves the handle's shadow offset by N (a file the thread has
 * open and the program writes through the same descriptor: its later reads are after it).
 * A file the program opens to write but the thread cannot open for reading (one the
 * program creates, not there yet while the thread runs ahead; one it may only write)
 * opens as a handle that reads nothing, so the thread goes on as the program will, until
 * the file can be opened (each use of the handle tries again; a lead read, which waits for
 * the program's call, finds the file the program has made); a later read-only open of
 * that path which finds nothing opens so too.
 */
static inline long foresight_pt_write(int h, size_t n)
{
    return foresight__pt_write(h, n);
}

static inline long foresight_pt_pwrite(int h, size_t n, int64_t off)
{
    (void)h;
    (void)off;
    return (long)n;
}

static inline size_t foresight_pt_fwrite(size_t size, size_t n, FILE *f)
{
    (void)size;
    (void)f;
    return n;
}

static inline int foresight_pt_fputc(int c, FILE *f)
{
    (void)f;
    return (unsigned char)c;
}

static inline int foresight_pt_fputs(FILE *f)
{
    (void)f;
    return 1;
}

/* fprintf's and printf's format and arguments are not passed: the thread formats
 * nothing (its count of characters is not known; 0 says success to a `< 0` check). */
static inline int foresight_pt_fprintf(FILE *f)
{
    (void)f;
    return 0;
}

static inline int foresight_pt_printf(void)
{
    return 0;
}

static inline int foresight_pt_fflush(FILE *f)
{
    (void)f;
    return 0;
}

/* strtok on the thread: a position of its own (the program's strtok goes on where it was),
 * in the thread's own strings (the compiler checks). */
static inline char *foresight_pt_strtok(char *s, const char *delim)
{
    static char *next;
    if (s == NULL)
        s = next;
    if (s == NULL)
        return NULL;
    s += __builtin_strspn(s, delim);
    if (*s == '\0') {
        next = NULL;
        return NULL;
    }
    char *e = s + __builtin_strcspn(s, delim);
    next = *e != '\0' ? e + 1 : NULL;
    *e = '\0';
    return s;
}

/* sscanf on the prefetch thread (parsing a line it read itself): vsscanf(3), but EOF with
 * EINVAL for a format glibc's vsscanf could allocate for (m, a, I, ', wide or non-ASCII
 * directives) or a string with a field of 1000 nonblank bytes or more: the thread never
 * calls the program's malloc. */
static inline int foresight_pt_sscanf(const char *str, const char *fmt, ...)
{
    va_list ap;
    int r;
    va_start(ap, fmt);
    r = foresight__pt_vsscanf(str, fmt, ap);
    va_end(ap);
    return r;
}

/* Ends the prefetch thread (its queued predictions issued first): replaces exit() and
 * abort() in its code.  Called on another thread, ends that thread (pthread_exit). */
FORESIGHT__NORETURN static inline void foresight_pt_exit(void)
{
    foresight__pt_exit();
}

/* The prefetch thread's private arena (also usable from INIT, before the thread starts):
 * malloc(3) semantics, 16-byte alignment, never the program's heap; inside the thread's
 * guarded reservation (at most 32 GiB). */
static inline void *foresight_pt_malloc(size_t n)
{
    return foresight__pt_malloc(n);
}

static inline void *foresight_pt_calloc(size_t count, size_t n)
{
    return foresight__pt_calloc(count, n);
}

static inline void *foresight_pt_realloc(void *p, size_t n)
{
    return foresight__pt_realloc(p, n);
}

static inline void foresight_pt_free(void *p)
{
    foresight__pt_free(p);
}

/* ---- Page coloring hints (paper 4: compiler-directed page coloring, CDPC) ----
 *
 * `foresight cc --color` passes, before each statically scheduled parallel loop, what
 * the compiler knows of how its iterations partition the arrays among the threads; the
 * runtime turns the summaries into a preferred cache color per virtual page (the
 * paper's five steps, Section 5.2) so each thread's data spreads over the whole
 * physically indexed cache.  Linux takes no such hint: what happens to the colors is
 * FORESIGHT_COLOR's (above; `sim` writes them for the cache simulator).  Hand-written
 * code may make the same calls.  Like every hint they never fail or change results;
 * unlike the others, foresight_color_apply allocates and writes a file: not from a
 * signal handler.  Summaries are kept once however often they are passed (up to 4096
 * arrays, 16384 references and 4096 groups; calls past that are counted in the map).
 */
#define FORESIGHT_COLOR_EVEN 0u    /* libgomp's schedule(static): the first N mod p get one more */
#define FORESIGHT_COLOR_BLOCKED 1u /* ceil(N/p) iterations each: LLVM libomp's schedule(static) */
#define FORESIGHT_COLOR_CYCLIC 2u  /* schedule(static, chunk): chunks dealt round robin */
#define FORESIGHT_COLOR_REVERSE 0x100u /* or-ed in: iteration 0 on the last thread (step -1) */
#define FORESIGHT_COLOR_ROTATE 0x200u  /* or-ed in (comm only): offsets wrap around the loop */
#define FORESIGHT_COLOR_WRITE 0x400u   /* or-ed in: the loop stores to these units */

void foresight__color_array(const void *base, size_t bytes) FORESIGHT__WEAK;
void foresight__color_ref(const void *array, size_t unit, long first, long count, long offset,
                          unsigned schedule, size_t chunk, unsigned nthreads, unsigned loop)
    FORESIGHT__WEAK;
void foresight__color_group(const void *a, const void *b) FORESIGHT__WEAK;
void foresight__color_access(const void *array, size_t unit, long first, long count,
                             long shift, long within, long stride, unsigned flags,
                             unsigned loop, unsigned phase, unsigned seq) FORESIGHT__WEAK;
void foresight__color_apply(int in_parallel) FORESIGHT__WEAK;

/* An array whose pages get colors: [base, base + bytes).  Pages no summary below
 * touches are taken as used by every thread. */
static inline void foresight_color_array(const void *base, size_t bytes)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (!foresight__color_array)
        return;
#endif
    foresight__color_array(base, bytes);
}

/* Array partitioning: a parallel loop of `count` iterations over `nthreads` threads,
 * scheduled as `schedule` (FORESIGHT_COLOR_*; `chunk` for CYCLIC), in iteration k
 * touches the `unit` bytes at array + unit * (first + k).  Loops with the same `loop`
 * number use their arrays together.  `array` must have been declared with
 * foresight_color_array. */
static inline void foresight_color_partition(const void *array, size_t unit, long first,
                                             long count, unsigned schedule, size_t chunk,
                                             unsigned nthreads, unsigned loop)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (!foresight__color_ref)
        return;
#endif
    foresight__color_ref(array, unit, first, count, 0, schedule, chunk, nthreads, loop);
}

/* Communication: the same loop also touches, in iteration k, the unit at
 * first + k + offset (shift; with FORESIGHT_COLOR_ROTATE in `schedule`, wrapped into
 * [first, first + count): rotate), as A[i + 1] does beside A[i]. */
static inline void foresight_color_comm(const void *array, size_t unit, long first, long count,
                                        long offset, unsigned schedule, size_t chunk,
                                        unsigned nthreads, unsigned loop)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (!foresight__color_ref)
        return;
#endif
    foresight__color_ref(array, unit, first, count, offset, schedule, chunk, nthreads, loop);
}

/* How one reference of loop `loop` walks its unit (for the cache simulator's model;
 * the colors ignore it): in iteration k, unit first + k + shift (as for
 * foresight_color_partition, FORESIGHT_COLOR_REVERSE in `flags`), from its byte `within`,
 * `stride` bytes per iteration of the innermost loop holding it, the `phase`-th such loop
 * of the body in source order (0: the parallel loop's own body); FORESIGHT_COLOR_WRITE
 * in `flags` for a store; `seq` its place among the body's references. */
static inline void foresight_color_access(const void *array, size_t unit, long first,
                                          long count, long shift, long within, long stride,
                                          unsigned flags, unsigned loop, unsigned phase,
                                          unsigned seq)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (!foresight__color_access)
        return;
#endif
    foresight__color_access(array, unit, first, count, shift, within, stride, flags, loop,
                            phase, seq);
}

/* Group access: two arrays used together (beyond those of one `loop` number). */
static inline void foresight_color_group(const void *a, const void *b)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (!foresight__color_group)
        return;
#endif
    foresight__color_group(a, b);
}

/* For code `foresight cc --color` generates before a `#pragma omp ... for`: the threads
 * that will share the loop (1 without -fopenmp), and how schedule(static) deals out
 * iterations, which OpenMP leaves to the implementation: gcc computes it inline, evenly
 * (the first N mod p threads one more: EVEN, whatever the runtime library); clang asks
 * LLVM's libomp, whose default is BLOCKED (kmp_sch_static_greedy) and KMP_SCHEDULE's
 * "balanced" EVEN.  Known from the compiler, not probed: a probe loop would start the
 * runtime's threads early (a program that forks before its first parallel region and
 * uses OpenMP in the child hangs in libgomp then). */
#if defined(_OPENMP) && !defined(__cplusplus)
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_in_parallel(void);

static inline unsigned foresight_color_threads(int worksharing_only)
{
    if (worksharing_only)
        return (unsigned)omp_get_num_threads();
    return omp_in_parallel() ? 1u : (unsigned)omp_get_max_threads();
}

static inline unsigned foresight_color_static(void)
{
#ifdef __clang__
    extern char *getenv(const char *);
    const char *k = getenv("KMP_SCHEDULE");
    for (; k && *k; k++) /* "balanced" anywhere in it */
        if (k[0] == 'b' && k[1] == 'a' && k[2] == 'l' && k[3] == 'a' && k[4] == 'n')
            return FORESIGHT_COLOR_EVEN;
    return FORESIGHT_COLOR_BLOCKED;
#else
    return FORESIGHT_COLOR_EVEN;
#endif
}
#define FORESIGHT__IN_PARALLEL() omp_in_parallel()
#else
static inline unsigned foresight_color_threads(int worksharing_only)
{
    (void)worksharing_only;
    return 1u;
}

static inline unsigned foresight_color_static(void)
{
    return FORESIGHT_COLOR_EVEN;
}

#define FORESIGHT__IN_PARALLEL() 0
#endif

/* Computes the colors from every summary so far (only when one is new).  Called inside
 * an OpenMP parallel region, other threads of the team may be using the arrays: real
 * mode (FORESIGHT_COLOR=real) then moves no page. */
static inline void foresight_color_apply(void)
{
#ifndef FORESIGHT_BUILDING_RUNTIME
    if (!foresight__color_apply)
        return;
#endif
    foresight__color_apply(FORESIGHT__IN_PARALLEL());
}

#ifdef __cplusplus
}
#endif

#pragma pop_macro("a")
#pragma pop_macro("across")
#pragma pop_macro("addr")
#pragma pop_macro("advise")
#pragma pop_macro("ahead")
#pragma pop_macro("ap")
#pragma pop_macro("arg")
#pragma pop_macro("argc")
#pragma pop_macro("args")
#pragma pop_macro("argv")
#pragma pop_macro("array")
#pragma pop_macro("at")
#pragma pop_macro("b")
#pragma pop_macro("base")
#pragma pop_macro("block")
#pragma pop_macro("bounce")
#pragma pop_macro("buf")
#pragma pop_macro("bytes")
#pragma pop_macro("c")
#pragma pop_macro("cap")
#pragma pop_macro("chunk")
#pragma pop_macro("cnt")
#pragma pop_macro("cond")
#pragma pop_macro("consumed")
#pragma pop_macro("copy")
#pragma pop_macro("count")
#pragma pop_macro("d")
#pragma pop_macro("delim")
#pragma pop_macro("dir")
#pragma pop_macro("dist")
#pragma pop_macro("e")
#pragma pop_macro("f")
#pragma pop_macro("fd")
#pragma pop_macro("fgetc")
#pragma pop_macro("fgets")
#pragma pop_macro("file")
#pragma pop_macro("first")
#pragma pop_macro("fixed")
#pragma pop_macro("flags")
#pragma pop_macro("fmt")
#pragma pop_macro("fn")
#pragma pop_macro("fread")
#pragma pop_macro("fs_abs")
#pragma pop_macro("fs_abut")
#pragma pop_macro("fs_armed")
#pragma pop_macro("fs_block")
#pragma pop_macro("fs_countdown")
#pragma pop_macro("fs_due")
#pragma pop_macro("fs_flags")
#pragma pop_macro("fs_granule")
#pragma pop_macro("fs_jump")
#pragma pop_macro("fs_jump_runs")
#pragma pop_macro("fs_lag")
#pragma pop_macro("fs_last")
#pragma pop_macro("fs_level")
#pragma pop_macro("fs_low")
#pragma pop_macro("fs_next")
#pragma pop_macro("fs_page")
#pragma pop_macro("fs_quiet")
#pragma pop_macro("fs_quiet_armed")
#pragma pop_macro("fs_region")
#pragma pop_macro("fs_released")
#pragma pop_macro("fs_run_start")
#pragma pop_macro("fs_short_last")
#pragma pop_macro("fs_slow")
#pragma pop_macro("fs_stat")
#pragma pop_macro("fs_state")
#pragma pop_macro("fs_step")
#pragma pop_macro("fs_streak")
#pragma pop_macro("fs_sweep_at")
#pragma pop_macro("fs_sweep_bytes")
#pragma pop_macro("g")
#pragma pop_macro("getc")
#pragma pop_macro("getenv")
#pragma pop_macro("got")
#pragma pop_macro("h")
#pragma pop_macro("hint")
#pragma pop_macro("i")
#pragma pop_macro("id")
#pragma pop_macro("idle")
#pragma pop_macro("in_parallel")
#pragma pop_macro("indirect")
#pragma pop_macro("init")
#pragma pop_macro("j")
#pragma pop_macro("k")
#pragma pop_macro("la")
#pragma pop_macro("last")
#pragma pop_macro("lead")
#pragma pop_macro("leaf")
#pragma pop_macro("left")
#pragma pop_macro("len")
#pragma pop_macro("line")
#pragma pop_macro("longindex")
#pragma pop_macro("loop")
#pragma pop_macro("low")
#pragma pop_macro("mask")
#pragma pop_macro("mode")
#pragma pop_macro("most")
#pragma pop_macro("n")
#pragma pop_macro("n_pipes")
#pragma pop_macro("n_streams")
#pragma pop_macro("name")
#pragma pop_macro("nest")
#pragma pop_macro("next")
#pragma pop_macro("now")
#pragma pop_macro("nthreads")
#pragma pop_macro("o")
#pragma pop_macro("off")
#pragma pop_macro("offset")
#pragma pop_macro("omp_get_max_threads")
#pragma pop_macro("omp_get_num_threads")
#pragma pop_macro("omp_in_parallel")
#pragma pop_macro("optarg_")
#pragma pop_macro("optind_")
#pragma pop_macro("optopt_")
#pragma pop_macro("orig")
#pragma pop_macro("p")
#pragma pop_macro("p0")
#pragma pop_macro("p1")
#pragma pop_macro("paddr")
#pragma pop_macro("page")
#pragma pop_macro("part")
#pragma pop_macro("path")
#pragma pop_macro("pbytes")
#pragma pop_macro("perm")
#pragma pop_macro("phase")
#pragma pop_macro("pipe")
#pragma pop_macro("pipes")
#pragma pop_macro("plen")
#pragma pop_macro("q")
#pragma pop_macro("queued")
#pragma pop_macro("quiet")
#pragma pop_macro("r")
#pragma pop_macro("raddr")
#pragma pop_macro("random")
#pragma pop_macro("rbytes")
#pragma pop_macro("ref")
#pragma pop_macro("ref_text")
#pragma pop_macro("region")
#pragma pop_macro("rest")
#pragma pop_macro("room")
#pragma pop_macro("run")
#pragma pop_macro("s")
#pragma pop_macro("schedule")
#pragma pop_macro("scope")
#pragma pop_macro("seq")
#pragma pop_macro("shift")
#pragma pop_macro("short_or_held")
#pragma pop_macro("site")
#pragma pop_macro("sites")
#pragma pop_macro("size")
#pragma pop_macro("st")
#pragma pop_macro("step")
#pragma pop_macro("str")
#pragma pop_macro("streams")
#pragma pop_macro("stride")
#pragma pop_macro("t")
#pragma pop_macro("text")
#pragma pop_macro("trail")
#pragma pop_macro("unit")
#pragma pop_macro("v")
#pragma pop_macro("val")
#pragma pop_macro("value")
#pragma pop_macro("vec")
#pragma pop_macro("vfscanf")
#pragma pop_macro("vlen")
#pragma pop_macro("volume")
#pragma pop_macro("wake_at")
#pragma pop_macro("whence")
#pragma pop_macro("within")
#pragma pop_macro("word")
#pragma pop_macro("worksharing_only")

#pragma pack(pop)

#endif /* FORESIGHT_H */
