"""The prefetch thread's slice (analysis/ioslice.py) and its code
(rewrite/prefetch_thread.py) on small C files: what is kept, what is predicted or read,
and what makes the compiler refuse a thread."""

from __future__ import annotations

import pytest

from foresight.compiler.analysis.ioslice import slice_program
from foresight.compiler.frontend.program import parse_program
from foresight.compiler.rewrite.prefetch_thread import Refused, thread_insertions
from foresight.compiler.rewrite.splice import splice

HEAD = """\
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
"""


def sliced(tmp_path, body: str):
    src = tmp_path / "x.c"
    src.write_text(HEAD + body)
    program = parse_program(src, [])
    return program, slice_program(program), src.read_bytes()


def kept_lines(program, sl, fn: str) -> set[int]:
    f = program.function(fn)
    return {f.stmts[i].line for i in sl.kept.get(fn, ())}


def thread_text(sl, data: bytes) -> str:
    ins = thread_insertions(sl, data, "x.c")
    return max(ins, key=lambda i: i.offset).text


BACKWARD = """\
static long sum;
static void use(const char *b, long i) { sum += b[0] * i; }
int main(int argc, char **argv)
{
    char buf[4096];
    long n = atol(argv[2]);
    int fd = open(argv[1], O_RDONLY);
    for (long i = n - 1; i >= 0; i--) {
        lseek(fd, i * 4096, SEEK_SET);
        if (read(fd, buf, sizeof buf) != sizeof buf)
            exit(1);
        use(buf, i);
    }
    printf("%ld\\n", sum);
    return 0;
}
"""


def test_figure_2_keeps_the_io_and_its_loop_not_the_computation(tmp_path):
    program, sl, data = sliced(tmp_path, BACKWARD)
    assert sl.ok, sl.refusals
    assert set(sl.kept) == {"main"}                  # use() computes only
    lines = kept_lines(program, sl, "main")
    assert {10, 11, 12, 13, 14} <= lines             # n, open, loop, lseek, read
    assert 16 not in lines and 18 not in lines       # use(), printf
    assert [c.name for _, c in sl.io_sites] == ["open", "lseek", "read"]
    (read,) = [c for _, c in sl.io_sites if c.name == "read"]
    assert not sl.lead(read)                         # sizeof buf does not read buf
    text = thread_text(sl, data)
    assert "foresight_pt_read(fd, (void *)0, sizeof buf, 3)" in text
    assert "foresight_pt_exit()" in text and "printf" not in text and "use(" not in text
    # The computation thread's read advances the call ID of the same site.
    text = program_text(sl, data)
    assert ("foresight_pt_fd_sent(__fs_ptx_clock, 3, read(foresight_pt_fd_tick(__fs_ptx_clock, "
            "3, 1, fd), foresight_pt_fd_buf(buf), sizeof buf))") in text


def test_the_scoping_example_of_section_4_1(tmp_path):
    program, sl, _ = sliced(tmp_path, """\
int main(void)
{
    int fp = open("d", O_RDONLY);
    int i;
    i = 5;
    {   int i;
        i = 6;
    }
    lseek(fp, i, SEEK_SET);
    char c;
    return (int)read(fp, &c, 1);
}
""")
    lines = kept_lines(program, sl, "main")
    assert 9 in lines and 11 not in lines            # i = 5 is, the inner i = 6 is not


def test_an_index_read_first_is_a_lead_read(tmp_path):
    program, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    long index[64], rec[512];
    int ix = open(argv[1], O_RDONLY), fd = open(argv[2], O_RDONLY);
    read(ix, index, sizeof index);
    double s = 0;
    for (int k = 0; k < 64; k++) {
        pread(fd, rec, sizeof rec, index[k] * 4096);
        s += rec[0];
    }
    printf("%g\\n", s);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    reads = {c.name: sl.lead(c) for _, c in sl.io_sites if c.name in ("read", "pread")}
    assert reads == {"read": True, "pread": False}
    text = thread_text(sl, data)
    assert "foresight_pt_read(ix, index, sizeof index," in text
    assert "foresight_pt_pread(fd, (void *)0, sizeof rec, index[k] * 4096," in text


def test_file_scope_variables_become_private_copies(tmp_path):
    program, sl, data = sliced(tmp_path, """\
static int fd;
static long stride = 2;
static void load(long i, char *b) { pread(fd, b, 4096, i * stride * 4096); }
int main(int argc, char **argv)
{
    char b[4096];
    fd = open(argv[1], O_RDONLY);
    for (long i = 99; i >= 0; i--)
        load(i, b);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    text = thread_text(sl, data)
    assert "(*__fs_ptg_fd_p) = foresight_pt_open(argv[1], O_RDONLY," in text
    assert "i * (*__fs_ptg_stride_p) * 4096" in text
    assert "__fs_ptg_stride_p = foresight_pt_malloc(sizeof(stride));" in text
    assert "__builtin_memcpy((void *)__fs_ptg_stride_p, (const void *)&stride" in text


def test_what_the_thread_cannot_run_is_refused_with_its_line(tmp_path):
    _, sl, _ = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    char *line = NULL;
    size_t cap = 0;
    if (getdelim(&line, &cap, ';', stdin) < 0) return 1;   /* not one of the channel's */
    int fd = open(line, O_RDONLY);
    char b[512];
    return (int)pread(fd, b, sizeof b, 0);
}
""")
    assert not sl.ok
    assert (9, "calls `getdelim`, which the prefetch thread cannot run") in sl.refusals


def test_getline_and_fread_of_standard_input_are_received(tmp_path):
    _, sl, data = sliced(tmp_path, """\
int main(void)
{
    char *line = NULL, hdr[8];
    size_t cap = 0;
    if (fread(hdr, 1, sizeof hdr, stdin) != sizeof hdr) return 1;
    int fd = open(hdr, O_RDONLY);
    char b[512];
    while (getline(&line, &cap, stdin) > 0)
        if (pread(fd, b, sizeof b, atol(line)) < 0) return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert [c.callee for _, c in sl.chan_sites] == ["fread", "getline"]
    thread = thread_text(sl, data)
    assert "foresight_pt_chan_fread(hdr, 1, sizeof hdr, 1)" in thread
    assert "while (foresight_pt_chan_getline(&line, &cap, 2) > 0)" in thread
    text = program_text(sl, data)
    assert "foresight_pt_send_fread(__fs_ptx_clock, 1, fread, hdr, 1, sizeof hdr, stdin)" \
        in text
    assert "foresight_pt_send_getline(__fs_ptx_clock, 2, getline, &line, &cap, stdin)" in text


def test_memory_the_thread_does_not_own_is_refused(tmp_path):
    _, sl, _ = sliced(tmp_path, """\
long *shared;
int main(int argc, char **argv)
{
    char b[512];
    int fd = open(argv[1], O_RDONLY);
    for (long i = 0; i < 10; i++) {
        shared[0] = i * 3;
        pread(fd, b, sizeof b, shared[0]);
    }
    return 0;
}
""")
    assert any("may reach the program's memory" in why for _, why in sl.refusals)
    assert any("reads the program's memory" in why for _, why in sl.refusals)


def test_addresses_copied_with_the_globals_holding_them_are_not_the_threads(tmp_path):
    """A file-scope table of pointers (or of structs holding them) is copied for the
    thread with the program's addresses in it: a lead read into what it points to would
    write the program's buffers."""
    for table, load in (("static char *bufs[2] = {buf_a, buf_b};", "bufs[k & 1]"),
                        ("static struct io { char *p; } ios[2] = {{buf_a}, {buf_b}};",
                         "ios[k & 1].p")):
        _, sl, _ = sliced(tmp_path, f"""\
static char buf_a[4096], buf_b[4096];
{table}
int main(int argc, char **argv)
{{
    int fd = open(argv[1], O_RDONLY);
    long at = 0;
    for (long k = 0; k < 100; k++) {{
        char *b = {load};
        if (pread(fd, b, 4096, at) != 4096)
            return 1;
        at = (long)b[100] * 4096;
    }}
    return 0;
}}
""")
        assert sl.refusals and all("program's memory" in why for _, why in sl.refusals), \
            (table, sl.refusals)


def test_stores_through_the_threads_own_pointers_are_kept(tmp_path):
    program, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    long n = atol(argv[2]);
    long *order = malloc(n * sizeof *order);
    for (long k = 0; k < n; k++)
        order[k] = (k * 7919) % n;
    char b[4096];
    int fd = open(argv[1], O_RDONLY);
    for (long k = 0; k < n; k++)
        pread(fd, b, sizeof b, order[k] * 4096);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert {7, 8, 9} <= kept_lines(program, sl, "main")
    assert "long *order = foresight_pt_malloc(n * sizeof *order);" in thread_text(sl, data)


def test_threads_and_jumps_refuse(tmp_path):
    _, sl, _ = sliced(tmp_path, """\
#include <setjmp.h>
jmp_buf env;
int main(int argc, char **argv)
{
    char b[512];
    if (setjmp(env)) return 1;
    return (int)read(open(argv[1], O_RDONLY), b, sizeof b);
}
""")
    assert any("setjmp" in why for _, why in sl.refusals)


def test_figure_3_the_thread_parses_the_configuration_itself(tmp_path):
    program, sl, data = sliced(tmp_path, """\
int main(void)
{
    int fp = open("mydata.dat", O_RDONLY), index;
    unsigned d;
    FILE *cfg = fopen("config.dat", "r");
    fseek(cfg, 10, SEEK_SET);
    while (fscanf(cfg, "%d", &index) == 1) {
        lseek(fp, index * 4, SEEK_SET);
        read(fp, &d, 4);
        int c = getc(cfg);
        getc(cfg);
        if (c == EOF)
            break;
    }
    return 0;
}
""")
    assert sl.ok, sl.refusals
    text = thread_text(sl, data)
    assert ('(__fs_ptx_n = -1, foresight_pt_fscanf(cfg, 4, &__fs_ptx_n, "%d" "%n", &index, '
            '&__fs_ptx_n))') in text
    assert "static int __fs_ptx_n;" in text
    assert "foresight_pt_read(fp, (void *)0, 4, 6)" in text
    # The byte of the first getc decides the loop, the second's is not needed.
    assert "foresight_pt_fgetc(cfg, 1, 7)" in text and "foresight_pt_fgetc(cfg, 0, 8)" in text
    # The program's side: fscanf and getc through foresight_pt_stdio_* (ticked, and sent
    # where the stream is stdin; getc is mirrored, not counted), read through
    # foresight_pt_fd_sent/_tick/_buf (ticked, and sent where the descriptor is 0).
    program = [i.text for i in thread_insertions(sl, data, "x.c")]
    assert program.count("foresight_pt_stdio_") == 3
    assert [t for t in program if t.startswith("foresight_pt_fd_")] == [
        "foresight_pt_fd_sent(__fs_ptx_clock, 6, ", "foresight_pt_fd_tick(__fs_ptx_clock, 6, 1, ",
        "foresight_pt_fd_buf("]


def test_the_report_lists_each_functions_slice_and_each_calls_kind(tmp_path):
    from foresight.compiler.options import CompileOptions
    from foresight.compiler.pipeline import transform

    src = tmp_path / "x.c"
    src.write_text(HEAD + """\
int main(void) {
    char buf[4096], idx[8];
    long sum = 0;
    int fd = open("data", O_RDONLY);
    if (fd < 0)
        return 1;
    if (pread(fd, idx, 8, 0) != 8)
        return 1;
    for (long k = 0; k < 100; k++) {
        if (pread(fd, buf, 4096, (off_t)idx[k % 8] * 4096 + k) != 4096)
            return 1;
        sum += buf[0];
    }
    printf("%ld\\n", sum);
    return 0;
}
""")
    out = transform(src, [], CompileOptions(prefetch_thread=True))
    lines = {e["line"]: e["message"] for e in out.report
             if e.get("pass") == "prefetch-thread" and e["message"].startswith(("slice", "site"))}
    assert set(lines) == {5, 8, 11, 14}
    # main's body, its declarations but `sum`, the I/O and the conditions around it, the
    # jumps they decide, return 0: not the computation (16) nor the printf (18).
    assert lines[5] == "slice of main: line 5-6, 8-15, 19"
    assert lines[8] == "site 1: `open` in main: open"
    assert lines[11] == "site 2: `pread` in main: lead read (the thread reads the data)"
    assert lines[14] == "site 3: `pread` in main: predicted read"


def test_a_global_named_only_by_sizeof_or_a_predicted_buffer_is_not_copied(tmp_path):
    """The thread copies the globals it reads at main's entry: a 256 MiB table that its
    clone names only under sizeof and as a predicted read's buffer must not be one."""
    _, sl, data = sliced(tmp_path, """\
static char table[65536][4096];
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    long sum = 0;
    for (long r = 0; r < 1024; r += 2) {
        if (pread(fd, table[r], sizeof table[0], r * (long)sizeof table[0]) != 4096)
            return 1;
        sum += table[r][100];
    }
    return (int)(sum & 1);
}
""")
    assert sl.ok, sl.refusals
    text = thread_text(sl, data)
    assert "foresight_pt_pread(fd, (void *)0, sizeof table[0]" in text
    assert "__fs_ptg_table" not in text


def test_a_static_initialised_with_a_global_refuses_the_thread(tmp_path):
    """`static const char *const in[] = {name};` in a clone cannot name the thread's copy
    of `name` (not a constant): refused with the line, not left to fail to compile."""


    _, sl, data = sliced(tmp_path, """\
static char name[] = "data.dat";
int main(void)
{
    static const char *const in[] = {name};
    char rec[4096];
    int fd = open(in[0], O_RDONLY);
    for (long r = 767; r >= 0; r--)
        if (pread(fd, rec, sizeof rec, r * 4096) != 4096)
            return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    with pytest.raises(Refused) as e:
        thread_insertions(sl, data, "x.c")
    assert e.value.line == 8 and "`name`" in e.value.why


def test_a_seccomp_filter_or_namespace_of_the_programs_refuses(tmp_path):
    """The thread's own seccomp filter breaks the program's SECCOMP_FILTER_FLAG_TSYNC,
    and unshare(CLONE_NEWUSER) and setns need a process of one thread."""
    _, sl, _ = sliced(tmp_path, """\
#include <sched.h>
#include <sys/syscall.h>
int main(int argc, char **argv)
{
    char b[512];
    syscall(SYS_seccomp, 1, 1, (void *)0);
    unshare(0x10000000);
    int fd = open(argv[1], O_RDONLY);
    for (long i = 0; i < 10; i++)
        pread(fd, b, sizeof b, i * 4096);
    return 0;
}
""")
    whys = dict(sl.refusals)
    assert "`SYS_seccomp`" in whys[10] and "one thread" in whys[11]


def test_the_programs_memory_reached_by_a_helpers_read_only_parameter_refuses(tmp_path):
    """Reads race with the program's writes: a copied global pointer (`plan = order`)
    passed to a helper's `const long *` parameter, and a comparison function reading a
    global the program writes, read the program's memory."""
    _, sl, _ = sliced(tmp_path, """\
static long order[768];
static const long *plan = order;
static double weight[768];
static long at(const long *p, int k) { return p[k]; }
static int by_weight(const void *a, const void *b)
{
    return weight[*(const int *)a] < weight[*(const int *)b] ? -1 : 1;
}
int main(void)
{
    char rec[4096];
    int idx[16];
    int fd = open("data.dat", O_RDONLY);
    for (int k = 0; k < 600; k++) {
        order[k] = 767 - k;
        weight[k] = k % 7;
        for (int j = 0; j < 16; j++)
            idx[j] = j;
        qsort(idx, 16, sizeof idx[0], by_weight);
        pread(fd, rec, sizeof rec, (at(plan, k) + idx[0]) * 4096);
    }
    return 0;
}
""")
    whys = " | ".join(why for _, why in sl.refusals)
    assert "`p[k]`" in whys and "reads the program's `weight`" in whys, whys


def test_the_thread_reads_its_own_copy_of_argv(tmp_path):
    """main may change its arguments in place (`*strchr(argv[1], ':') = 0`) while the
    thread reads them: it gets copies of argv's strings, made before main's first line."""
    _, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    char rec[4096];
    int fd = open(argv[1], O_RDONLY);
    for (long k = 0; k < 600; k++)
        pread(fd, rec, sizeof rec, k * 4096);
    return argc;
}
""")
    assert sl.ok, sl.refusals
    ins = thread_insertions(sl, data, "x.c")
    text = "".join(i.text for i in ins)
    assert "(__fs_ptx_arg1 = __fs_ptx_strings(__fs_ptx_arg1)) == 0" in text


def test_a_copied_global_holding_addresses_passed_by_address_is_not_the_threads(tmp_path):
    """`walk(fd, &gio)` with gio = {buf_a}: the thread's copy of gio still points at the
    program's buf_a, so the helper's lead read through io->p would write it."""
    _, sl, _ = sliced(tmp_path, """\
static char buf_a[4096];
struct io { char *p; };
static struct io gio = {buf_a};
static long walk(int fd, struct io *io, long at)
{
    char *b = io->p;
    if (pread(fd, b, 4096, at) != 4096)
        return -1;
    return (long)b[100] * 4096;
}
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    long at = 0;
    for (int k = 0; k < 100 && at >= 0; k++)
        at = walk(fd, &gio, at);
    return 0;
}
""")
    assert sl.refusals and all("program's memory" in why for _, why in sl.refusals), \
        sl.refusals


def test_a_global_in_a_variable_length_sizeof_is_read_from_the_copy(tmp_path):
    """`sizeof(char[rec])` is computed at run time from rec: the thread reads its copy."""
    _, sl, data = sliced(tmp_path, """\
static long rec = 4096;
int main(int argc, char **argv)
{
    char buf[8192];
    int fd = open(argv[1], O_RDONLY);
    for (long k = 767; k >= 0; k--)
        pread(fd, buf, sizeof(char[rec]), k * 4096);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert "sizeof(char[(*__fs_ptg_rec_p)])" in thread_text(sl, data)


def test_descriptor_reads_tick_with_their_descriptor_unless_the_file_gives_advice(tmp_path):
    """read/pread pass their descriptor through foresight_pt_tick_fd (the program's
    readahead goes off while the thread leads; read through foresight_pt_fd_tick, ADVISE
    1); a file that calls posix_fadvise keeps its own advice: plain ticks."""
    program, sl, data = sliced(tmp_path, BACKWARD)
    assert sl.ok, sl.refusals
    text = splice(data, thread_insertions(sl, data, "x.c")).decode()
    assert ("foresight_pt_fd_sent(__fs_ptx_clock, 3, read(foresight_pt_fd_tick(__fs_ptx_clock, "
            "3, 1, fd), foresight_pt_fd_buf(buf), sizeof buf))") in text
    advising = BACKWARD.replace("    int fd = open(argv[1], O_RDONLY);\n",
                                "    int fd = open(argv[1], O_RDONLY);\n"
                                "    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);\n")
    program, sl, data = sliced(tmp_path, advising)
    assert sl.ok, sl.refusals
    text = splice(data, thread_insertions(sl, data, "x.c")).decode()
    assert "foresight_pt_tick_fd" not in text
    assert ("foresight_pt_fd_sent(__fs_ptx_clock, 3, read(foresight_pt_fd_tick(__fs_ptx_clock, "
            "3, 0, fd), foresight_pt_fd_buf(buf), sizeof buf))") in text


def program_text(sl, data: bytes) -> str:
    """The file as the computation thread runs it (the thread's code cut off)."""
    ins = thread_insertions(sl, data, "x.c")
    thread = max(ins, key=lambda i: i.offset)
    return splice(data, [i for i in ins if i is not thread]).decode()


def test_values_from_standard_input_and_rand_are_sync_points(tmp_path):
    program, sl, data = sliced(tmp_path, """\
#include <time.h>
int main(void)
{
    char name[64];
    long n, r;
    if (fgets(name, sizeof name, stdin) == NULL) return 1;
    if (scanf("%ld", &n) != 1) return 1;
    int fd = open(name, O_RDONLY);
    char b[512];
    for (long k = 0; k < n; k++) {
        r = rand() % n;
        if (pread(fd, b, sizeof b, r * 512) < 0) return 1;
    }
    srand((unsigned)time(NULL));
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert [c.callee for _, c in sl.chan_sites] == ["fgets", "scanf", "rand"]
    assert 18 not in kept_lines(program, sl, "main")     # time() decides no I/O
    thread = thread_text(sl, data)
    assert "foresight_pt_chan_fgets(name, sizeof name, 1)" in thread
    assert 'foresight_pt_chan_scanf(2, "%ld", &n)' in thread
    assert "r = foresight_pt_chan_int(3) % n;" in thread
    assert "rand(" not in thread and "fgets(" not in thread.replace("chan_fgets(", "")
    text = program_text(sl, data)
    assert "foresight_pt_send_fgets(__fs_ptx_clock, 1, fgets(name, sizeof name, stdin))" in text
    assert 'foresight_pt_send_scanf(__fs_ptx_clock, 2, "%ld", &n)' in text
    assert "r = foresight_pt_send_int(__fs_ptx_clock, 3, rand()) % n;" in text
    assert "srand((unsigned)time(NULL))" in text           # not in the slice: not sent


def test_a_sync_point_keeps_every_call_of_its_function(tmp_path):
    # pick() is called where the slice needs its value and where it does not: the program
    # sends at both, so the thread must make both calls.
    program, sl, data = sliced(tmp_path, """\
static long pick(long n) { return random() % n; }
int main(int argc, char **argv)
{
    long noise = pick(10);
    int fd = open(argv[1], O_RDONLY);
    char b[512];
    for (int k = 0; k < 100; k++)
        if (pread(fd, b, sizeof b, pick(1000) * 512) < 0) return 1;
    printf("%ld\\n", noise);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert {8, 11} <= kept_lines(program, sl, "main")
    assert "foresight_pt_chan_long(1) % n" in thread_text(sl, data)


def test_standard_input_read_by_descriptor_and_getc_are_received(tmp_path):
    _, sl, data = sliced(tmp_path, """\
int main(void)
{
    char hdr[32];
    if (read(0, hdr, sizeof hdr - 1) <= 0) return 1;
    int c = getc(stdin);
    int fd = open(hdr, O_RDONLY);
    char b[512];
    return (int)pread(fd, b, sizeof b, c * 512);
}
""")
    assert sl.ok, sl.refusals
    assert [c.callee for _, c in sl.chan_sites] == ["read", "getc"]
    thread = thread_text(sl, data)
    assert "foresight_pt_chan_read(1, hdr, sizeof hdr - 1)" in thread
    assert "int c = foresight_pt_chan_int(2);" in thread
    text = program_text(sl, data)
    assert "foresight_pt_send_read(__fs_ptx_clock, 1, read, 0, hdr, sizeof hdr - 1)" in text
    assert "foresight_pt_send_int(__fs_ptx_clock, 2, getc(stdin))" in text


def test_getopt_is_a_sync_point_and_its_variables_are_the_threads(tmp_path):
    # The file's name is argv[optind]: optind is defined by every getopt call (libc sets
    # it), so the option loop is in the slice even where no option matters (the `v`
    # loop), and the thread reads its own optind and optarg, taken from the program's
    # calls, never libc's.
    program, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    int c;
    long rec = 512;
    while ((c = getopt(argc, argv, "r:v")) != -1)
        if (c == 'r') rec = atol(optarg);
    char b[65536];
    int fd = open(argv[optind], O_RDONLY);
    for (long k = 9; k >= 0; k--)
        if (pread(fd, b, rec, k * rec) < 0) return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert [c.callee for _, c in sl.chan_sites] == ["getopt"]
    assert {9, 10, 12} <= kept_lines(program, sl, "main")
    thread = thread_text(sl, data)
    assert "while ((c = __fs_ptx_getopt(1, 0)) != -1)" in thread
    assert "rec = atol(__fs_ptx_optarg);" in thread
    assert "foresight_pt_open(argv[__fs_ptx_optind], O_RDONLY, 1)" in thread
    assert "getopt(" not in thread.replace("_getopt(", "")
    # argv in its original order, the program's pointers and the thread's strings, set up
    # before the strings are copied (the program's getopt permutes its own argv).
    init = thread[thread.index("__fs_ptx_init(void)\n{"):thread.index("__fs_ptx_run(void)")]
    assert init.index("__fs_ptx_argv_orig = __fs_ptx_pointers(__fs_ptx_arg1);") < \
        init.index("__fs_ptx_strings(__fs_ptx_arg1)") < \
        init.index("__fs_ptx_argv_copy = __fs_ptx_pointers(__fs_ptx_arg1);")
    text = program_text(sl, data)
    assert 'while ((c = __fs_ptx_send_getopt(1, getopt(argc, argv, "r:v"), 0, argv)) != -1)' in text
    assert "static int __fs_ptx_send_getopt(unsigned, int, const int *, char *const *);" in text
    # The program's own optarg and optind stay libc's.
    assert "rec = atol(optarg);" in text and "open(argv[optind], O_RDONLY)" in text
    # No option matters but optind: the loop is kept for it.
    program, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    while (getopt(argc, argv, "v") != -1)
        ;
    char b[512];
    int fd = open(argv[optind], O_RDONLY);
    return (int)pread(fd, b, sizeof b, 0);
}
""")
    assert sl.ok, sl.refusals
    assert 7 in kept_lines(program, sl, "main")
    assert "while (__fs_ptx_getopt(1, 0) != -1)" in thread_text(sl, data)


def test_getopt_long_is_received_and_its_flags_set_on_the_thread(tmp_path):
    table = """\
#include <getopt.h>
static int verbose;
static const struct option longs[] = {
    {"record", required_argument, NULL, 'r'},
    {"verbose", no_argument, FLAG, 1},
    {0, 0, 0, 0},
};
"""
    body = """\
int main(int argc, char **argv)
{
    int c, i = 0;
    long rec = 512;
    while ((c = getopt_long(argc, argv, "r:", longs, INDEX)) != -1)
        if (c == 'r') rec = atol(optarg);
    char b[65536];
    int fd = open(argv[optind], O_RDONLY);
    return (int)pread(fd, b, rec, 0) + verbose + i;
}
"""
    _, sl, data = sliced(tmp_path, table.replace("FLAG", "NULL")
                         + body.replace("INDEX", "&i"))
    assert sl.ok, sl.refusals
    assert "while ((c = __fs_ptx_getopt(1, &i)) != -1)" in thread_text(sl, data)
    assert "__fs_ptx_send_getopt(1, getopt_long(argc, argv, \"r:\", longs, &i), &i, argv)" \
        in program_text(sl, data)
    # A flag pointer other than `&name` (an array's name, a macro): the program's call
    # stores through it where the thread cannot follow; so may a table the program
    # changes as it runs.
    for flag in ("flags", "FLAGP"):
        _, sl, _ = sliced(tmp_path, "static int flags[2];\n#define FLAGP &flags[0]\n"
                          + table.replace("FLAG", flag) + body.replace("INDEX", "&i"))
        assert any("may set flags" in w for _, w in sl.refusals), (flag, sl.refusals)
    _, sl, _ = sliced(tmp_path, table.replace("FLAG", "NULL").replace("static const", "static")
                      + body.replace("INDEX", "&i").replace(
                          "    int c, i = 0;", "    int c, i = 0;\n    longs[1].flag = &verbose;"))
    assert [why for _, why in sl.refusals] == [
        "`getopt_long` takes its options from `longs` (line 7), which the program changes "
        "as it runs"]
    # `&verbose` in a file-scope table: the thread sets its copy of verbose (which the
    # slice reads: the pread's size) when the program's call set the program's.
    _, sl, data = sliced(tmp_path, table.replace("FLAG", "&verbose") + body.replace(
        "INDEX", "NULL").replace("return (int)pread(fd, b, rec, 0) + verbose + i;",
                                 "if (pread(fd, b, rec + verbose, 0) < 0)\n        return 1;"
                                 "\n    return i;"))
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "__fs_ptx_flags_0(__fs_ptx_getopt(1, &__fs_ptx_li_t), &__fs_ptx_li_t, 0)" in thread
    assert "f == &verbose ? &(*__fs_ptg_verbose_p) : (int *)0" in thread
    assert "longs, ((void)(NULL), &__fs_ptx_li)), &__fs_ptx_li, argv)" in program_text(sl, data)
    # An index the thread would store into the program's variable through.
    _, sl, _ = sliced(tmp_path, table.replace("FLAG", "NULL").replace(
        "static int verbose;", "static int verbose, gi;") + body.replace("INDEX", "&gi"))
    assert [why for _, why in sl.refusals] == [
        "`getopt_long` stores its option's index through a pointer other than the address "
        "of a local variable"]


def test_strtok_cuts_the_threads_own_strings_only(tmp_path):
    body = """\
#include <string.h>
char *names = NULL;
int main(int argc, char **argv)
{
    char line[128], b[4096];
    FILE *list = fopen(argv[1], "r");
    int fd = open(argv[2], O_RDONLY);
    while (fgets(line, sizeof line, list) != NULL) {
        char *save = NULL;
        char *head = strtok_r(CUT, ";", &save);
        long at = atol(strtok(head, " ")) + atol(strtok(NULL, " "));
        if (pread(fd, b, sizeof b, at) < 0) return 1;
    }
    return 0;
}
"""
    _, sl, data = sliced(tmp_path, body.replace("CUT", "line"))
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "char *head = strtok_r(line, \";\", &save);" in thread
    assert "atol(foresight_pt_strtok(head, \" \")) + atol(foresight_pt_strtok(NULL, \" \"))" \
        in thread
    # The program's string (a copied global pointer still points there): refused.
    _, sl, _ = sliced(tmp_path, body.replace("CUT", "names"))
    assert ("strtok_r` may write the program's memory through `names`"
            in " ".join(why for _, why in sl.refusals)), sl.refusals


MACROS = """\
#define CHECK(x) do { if ((x) < 0) { perror("read"); exit(1); } } while (0)
#define ECHO(x) do { if ((x) < 0) { perror(#x); exit(1); } } while (0)
#define TWICE(x) ((x) < 0 ? 0 : (x))
#define DIE(m) do { fprintf(stderr, "%s\\n", m); exit(2); } while (0)
#define QUIT(m) do { puts(m); return 3; } while (0)
static int gfd;
"""


def test_a_read_in_a_macros_argument_runs_alone_on_the_thread(tmp_path):
    # CHECK(pread(...)): the thread makes the call as the file spells it in the macro's
    # argument, as if the check passed; the program's call gets its tick there, inside the
    # macro call; a file-scope descriptor in the argument is the thread's copy; DIE, which
    # can only end the process, is not the thread's.
    body = MACROS + """\
int main(int argc, char **argv)
{
    char b[4096];
    gfd = open(argv[1], O_RDONLY);
    if (gfd < 0)
        DIE("open");
    for (long k = 99; k >= 0; k--)
        USE;
    return 0;
}
"""
    _, sl, data = sliced(tmp_path,
                         body.replace("USE", "CHECK(pread(gfd, b, sizeof b, k * 4096))"))
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "{ (void)(foresight_pt_pread((*__fs_ptg_gfd_p), (void *)0, sizeof b, k * 4096, 2)); }" \
        in thread
    assert "DIE(" not in thread and "CHECK(" not in thread
    text = program_text(sl, data)
    assert "CHECK(pread(foresight_pt_tick_fd(__fs_ptx_clock, 2, gfd), b, sizeof b, k * 4096));" \
        in text
    # A macro that makes a string of its argument (the tick would show in it), one that
    # evaluates it twice (two ticks), one that returns (not the process's end): refused.
    for use, why in [("ECHO(pread(gfd, b, sizeof b, k * 4096))", "made by a macro"),
                     ("(void)TWICE(pread(gfd, b, sizeof b, k * 4096))",
                      "a macro makes `pread` more than once from one text"),
                     ("if (gfd < 0) QUIT(\"x\"); else (void)pread(gfd, b, 1, k)",
                      "made by a macro")]:
        _, sl, _ = sliced(tmp_path, body.replace("USE", use))
        assert not sl.ok and any(why in w for _, w in sl.refusals), (use, sl.refusals)


def test_macros_that_do_more_than_check_are_refused(tmp_path):
    # A helper's probe: each of these was run as its call alone, dropping what the macro
    # does besides (a loop, a jump, a store), or pasting the tick into a string.
    head = """\
#define SLURP(c, n) while ((c) == 512) n++
#define TAKE(x) do { if ((x) <= 0) goto done; } while (0)
#define BACK(c) do { if ((c) != 512) exit(1); pos -= 512; } while (0)
#define CHECK(x) if ((x) != 512) exit(1)
#define LOUD(x) do { fprintf(stderr, "%s\\n", #x); if ((x) < 0) exit(2); } while (0)
#define QUIET(x) do { if ((x) < 0) exit(2); } while (0)
#define WITH(m, x) m(x)
"""
    body = """\
int main(int argc, char **argv)
{
    char b[512];
    long n = 0, pos = 4096;
    int fd = open(argv[1], O_RDONLY);
    for (long k = 9; k >= 0; k--) {
        USE;
    }
done:
    return (int)(n + pos);
}
"""
    for use, why in [
            ("SLURP(pread(fd, b, 512, k * 512), n)", "made by a macro"),
            ("TAKE(pread(fd, b, 512, k * 512))", "made by a macro"),
            ("BACK(pread(fd, b, 512, pos))", "made by a macro"),
            ("if (k % 3) CHECK(pread(fd, b, 512, k)); else pos -= 10",
             "`pread` is in the text of a statement a macro makes that the thread does not run"),
            ("WITH(LOUD, pread(fd, b, 512, k))", "made by a macro")]:
        _, sl, data = sliced(tmp_path, head + body.replace("USE", use))
        refusals = [w for _, w in sl.refusals]
        if sl.ok:   # refused while writing the thread's code
            from foresight.compiler.rewrite.prefetch_thread import Refused
            try:
                thread_text(sl, data)
            except Refused as e:
                refusals = [e.why]
        assert any(why in w for w in refusals), (use, refusals)
    # A stringizing definition #undef'd after its use still made the string there.
    _, sl, _ = sliced(tmp_path, head.replace("#define QUIET", "#define QUIET_(x) #x\n"
                                             "#define QUIET") + body.replace(
        "USE", "LOUD(pread(fd, b, 512, k))").replace(
        "done:", "done:;\n#undef LOUD\n#define LOUD(x) QUIET(x)\n"))
    assert not sl.ok


def test_every_strtok_call_is_the_threads_where_one_is(tmp_path):
    # strtok(line, ":") sets the position strtok(NULL, " ") goes on from, though its own
    # token is never read.
    program, sl, _ = sliced(tmp_path, """\
#include <string.h>
int main(int argc, char **argv)
{
    char line[128], b[512];
    FILE *list = fopen(argv[1], "r");
    int fd = open(argv[2], O_RDONLY);
    while (fgets(line, sizeof line, list) != NULL) {
        strtok(line, ":");
        char *v = strtok(NULL, " ");
        if (v == NULL || pread(fd, b, sizeof b, atol(v)) < 0) return 1;
    }
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert 12 in kept_lines(program, sl, "main")


def test_the_threads_own_argv_and_optarg_may_be_cut(tmp_path):
    # main's argv and optarg are the thread's copies (in its arena): strtok may cut them.
    _, sl, _ = sliced(tmp_path, """\
#include <string.h>
extern char *optarg;
extern int optind;
int main(int argc, char **argv)
{
    int c;
    long at = 0;
    while ((c = getopt(argc, argv, "r:")) != -1)
        if (c == 'r') at = atol(strtok(optarg, ","));
    char *name = strtok(argv[optind], ",");
    char b[512];
    int fd = open(name, O_RDONLY);
    return (int)pread(fd, b, sizeof b, at);
}
""")
    assert sl.ok, sl.refusals


def test_what_a_library_call_reads_through_a_pointer_is_computed(tmp_path):
    # open(path) reads the string `path` points to: the snprintf that fills the malloc'd
    # buffer is the thread's (a helper's probe: left out, the thread opened "").
    program, sl, _ = sliced(tmp_path, """\
#include <string.h>
int main(int argc, char **argv)
{
    size_t n = strlen(argv[1]) + 16;
    char *path = malloc(n);
    snprintf(path, n, "%s/data.bin", argv[1]);
    char *num = malloc(32);
    strcpy(num, argv[2]);
    char b[512];
    int fd = open(path, O_RDONLY);
    if (pread(fd, b, sizeof b, atol(num)) < 0) return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert {10, 12} <= kept_lines(program, sl, "main")     # snprintf, strcpy


def test_a_stream_passed_to_a_helper_may_be_stdin(tmp_path):
    # The helper reads the stream with the runtime's stdio, which never writes through a
    # FILE it did not make: a stream that may be stdin is no store of the thread's.
    _, sl, data = sliced(tmp_path, """\
static long process(FILE *in, int fd)
{
    char line[64], b[512];
    long n = 0;
    while (fgets(line, sizeof line, in) != NULL)
        n += pread(fd, b, sizeof b, atol(line));
    return n;
}
int main(int argc, char **argv)
{
    FILE *in = argc > 2 ? fopen(argv[2], "r") : stdin;
    int fd = open(argv[1], O_RDONLY);
    return (int)process(in, fd);
}
""")
    assert sl.ok, sl.refusals
    assert "foresight_pt_fgets(line, sizeof line, in, 1)" in thread_text(sl, data)


def test_printf_writes_through_no_argument_unless_its_format_says_n(tmp_path):
    # Printing the name does not make printf one of its definitions (a variadic pointer is
    # otherwise one the callee may write through); %n, or a format that is not a literal,
    # does.
    program, sl, _ = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    char name[64];
    int used;
    const char *fmt = argv[2];
    snprintf(name, sizeof name, "%s.dat", argv[1]);
    printf("reading %s (%" PRId64 ")\\n", name, (int64_t)1);
    fprintf(stderr, "%s%n\\n", name, &used);
    printf(fmt, name);
    int fd = open(name, O_RDONLY);
    char b[512];
    return (int)pread(fd, b, sizeof b, 0);
}
""".replace("int main", "#include <inttypes.h>\nint main"))
    kept = kept_lines(program, sl, "main")
    assert 12 not in kept                  # printf("reading %s ...")
    assert {13, 14} <= kept                # %n; a format from a variable
    assert not sl.ok                       # (fprintf and printf are not the thread's)


def test_checked_writes_are_predicted_not_made(tmp_path):
    # `if (write(...) != n) return 1;` puts the write in the slice (its result decides a
    # return): the thread predicts it succeeds whole and never passes the data.
    program, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    int in = open(argv[1], O_RDONLY);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FILE *log = fopen(argv[3], "w");
    char buf[4096];
    for (long r = 99; r >= 0; r--) {
        if (pread(in, buf, sizeof buf, r * 4096) != sizeof buf) return 1;
        if (write(out, buf, sizeof buf) != sizeof buf) return 1;
        if (fwrite(buf, 1, 16, log) != 16 || fputs(buf, log) < 0 || fflush(log)) return 1;
    }
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert {12, 13, 14} <= kept_lines(program, sl, "main")
    thread = thread_text(sl, data)
    assert "foresight_pt_write(out, sizeof buf)" in thread
    assert "foresight_pt_fwrite(1, 16, log)" in thread
    assert "foresight_pt_fputs(log)" in thread and "foresight_pt_fflush(log)" in thread
    assert "write(out, buf" not in thread


def test_a_value_no_slice_reads_is_not_computed(tmp_path):
    # scan()'s checksum is printed, never read by the slice: its clone returns a zero of
    # its type and the thread runs no checksum; where a caller's condition reads a value
    # (count()), it is computed.
    program, sl, data = sliced(tmp_path, """\
static unsigned long mix(unsigned long h, const char *b) { return h * 31 + b[0]; }
static unsigned long scan(int fd, long n)
{
    char buf[4096];
    unsigned long h = 7;
    for (long r = n - 1; r >= 0; r--) {
        if (pread(fd, buf, sizeof buf, r * 4096) != sizeof buf) return 0;
        h = mix(h, buf);
    }
    return h;
}
static long count(const char *s) { return atol(s); }
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    long n;
    if ((n = count(argv[2])) <= 0) return 1;
    unsigned long h = scan(fd, n);
    printf("%lu\\n", h);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert "scan" not in sl.needed and "count" in sl.needed
    assert 12 not in kept_lines(program, sl, "scan")        # h = mix(h, buf)
    thread = thread_text(sl, data)
    assert "{ static __typeof__(1 ? (h ) : (h )) __fs_ptx_z; return __fs_ptx_z; }" in thread
    assert "{ static __typeof__(1 ? (0 ) : (0 )) __fs_ptx_z; return __fs_ptx_z; }" in thread
    assert "return atol(s);" in thread


def test_a_read_inside_a_call_the_thread_cannot_run_is_made_alone(tmp_path):
    # printf holds a read: the thread makes the read (it keeps the call IDs in step) and
    # not the printf.  Two such calls in one statement (whose order cc chooses) still
    # refuse.
    body = """\
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    char b[4096];
    printf("%zd bytes\\n", pread(fd, b, sizeof b, 4096));
    return 0;
}
"""
    program, sl, data = sliced(tmp_path, body)
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "{ (void)(foresight_pt_pread(fd, (void *)0, sizeof b, 4096, 2)); }" in thread
    assert "printf" not in thread.split("#pragma GCC diagnostic ignored")[-1]
    _, sl, _ = sliced(tmp_path, body.replace(
        "pread(fd, b, sizeof b, 4096));", "pread(fd, b, sizeof b, 0), (long long)lseek(fd, 0, 1));")
        .replace('bytes\\n"', 'bytes at %lld\\n"'))
    assert (9, "`pread` is in the data of `printf`, which the thread does not pass") in \
        sl.refusals


def test_a_buffer_the_statement_also_reads_makes_a_lead_read(tmp_path):
    # `back` is pread's buffer and memcmp's argument in one condition: the thread must
    # read the data (a lead read) and declare `back`.
    program, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    char back[32], want[32] = "x";
    for (int r = 9; r >= 0; r--)
        if (pread(fd, back, 32, r * 4096) != 32 || memcmp(back, want, 32) != 0)
            return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    read = next(c for _, c in sl.io_sites if c.name == "pread")
    assert sl.lead(read)
    assert "char back[32]" in thread_text(sl, data)


def test_comments_between_the_parameters_and_the_body(tmp_path):
    _, sl, data = sliced(tmp_path, """\
static long at(int k) // the record's place
{
    return (long)k * 4096;
}
static long get(int fd, char *b, int k) /* one record */
{
    return pread(fd, b, 4096, at(k));
}
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    char b[4096];
    for (int k = 9; k >= 0; k--)
        if (get(fd, b, k) != 4096)
            return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "static __fs_ptx_safe long __fs_ptf_at(int k);" in thread  # a prototype, no //
    assert "static __fs_ptx_safe long __fs_ptf_get(int fd, char *b, int k);" in thread


def test_a_files_size_from_fstat(tmp_path):
    # fstat on the thread's own descriptor into its own struct: the size decides the reads.
    _, sl, data = sliced(tmp_path, """\
#include <sys/stat.h>
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fstat(fd, &st) != 0) return 1;
    char b[4096];
    for (off_t off = st.st_size - 4096; off >= 0; off -= 4096)
        if (pread(fd, b, sizeof b, off) != sizeof b) return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert "if (foresight_pt_fstat(fd, &st) != 0) return 0;" in thread_text(sl, data)


def test_errno_ctype_and_a_null_end_pointer(tmp_path):
    # An EINTR retry reads errno, a digit test reads <ctype.h>'s table, strtol is given no
    # end pointer: each was a refusal ("calls __errno_location", "stores through NULL").
    _, sl, data = sliced(tmp_path, """\
#include <ctype.h>
#include <errno.h>
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    long n = isdigit((unsigned char)argv[2][0]) ? strtol(argv[2], NULL, 10) : 10;
    char b[4096];
    for (long r = n - 1; r >= 0; r--) {
        ssize_t got;
        do
            got = pread(fd, b, sizeof b, r * 4096);
        while (got < 0 && errno == EINTR);
        if (got != sizeof b) return 1;
    }
    return 0;
}
""")
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "errno == EINTR" in thread and "isdigit(" in thread


def test_an_index_parsed_with_sscanf(tmp_path):
    # Each line of an index file names a record: fgets (a lead read), then sscanf into the
    # thread's own variables (foresight_pt_sscanf: glibc's, but never where it could
    # allocate).
    _, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    FILE *idx = fopen(argv[1], "r");
    int fd = open(argv[2], O_RDONLY);
    char line[128], name[32], b[4096];
    long rec;
    while (fgets(line, sizeof line, idx) != NULL) {
        if (sscanf(line, "%31s %ld", name, &rec) != 2) continue;
        if (pread(fd, b, sizeof b, rec * 4096) != sizeof b) return 1;
    }
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert 'foresight_pt_sscanf(line, "%31s %ld", name, &rec)' in thread_text(sl, data)


def test_lines_read_with_getline(tmp_path):
    program, sl, data = sliced(tmp_path, """\
int main(int argc, char **argv)
{
    FILE *idx = fopen(argv[1], "r");
    int fd = open(argv[2], O_RDONLY);
    char *line = NULL, b[4096];
    size_t cap = 0;
    while (getline(&line, &cap, idx) > 0)
        if (pread(fd, b, sizeof b, atol(line) * 4096) != sizeof b) return 1;
    free(line);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    get = next(c for _, c in sl.io_sites if c.name == "getline")
    assert sl.lead(get)
    thread = thread_text(sl, data)
    assert "foresight_pt_getline(&line, &cap, idx, 3)" in thread
    text = program_text(sl, data)
    assert "foresight_pt_stdio_getline(__fs_ptx_clock, 3, getline, &line, &cap, idx)" in text


def test_a_pointer_a_sync_point_stores_through_is_computed(tmp_path):
    # scanf stores through `name`: the thread receives into its own allocation, so the
    # malloc defining the pointer is in the slice (the review's case: an unset pointer
    # that aliased a global let the thread write the program's memory).
    program, sl, data = sliced(tmp_path, """\
static int ask(void)
{
    char *name;
    name = malloc(100);
    return scanf("%99s", name);
}
int main(int argc, char **argv)
{
    if (ask() != 1) return 1;
    int fd = open(argv[1], O_RDONLY);
    char b[4096];
    for (long r = 9; r >= 0; r--)
        if (pread(fd, b, sizeof b, r * 4096) != sizeof b) return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert "name = foresight_pt_malloc(100);" in thread_text(sl, data)


def test_conditional_operators_and_errno_stores(tmp_path):
    # A call whose value picks the branch (`back(n) ? bwd(fd) : fwd(fd)`) has its value
    # computed; `errno = 0;` before a call whose errno the slice reads is kept.
    program, sl, data = sliced(tmp_path, """\
#include <errno.h>
static int back(int n) { return n > 2; }
static long bwd(int fd) { char b[64]; return pread(fd, b, 64, 4096); }
static long fwd(int fd) { char b[64]; return pread(fd, b, 64, 0); }
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    char z[1];
    back(argc) ? bwd(fd) : fwd(fd);
    errno = 0;
    if (pread(fd, z, 0, 0) < 0 || errno) return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert "back" in sl.needed
    assert 14 in kept_lines(program, sl, "main")        # errno = 0;


def test_readv_lengths_are_read_from_the_threads_own_iovecs(tmp_path):
    # The thread sums the lengths itself: from an array of its own (a clone's local, its
    # copy of a file-scope array), not through a pointer that holds the program's array,
    # which the program changes as the thread reads it.
    body = """\
#include <sys/uio.h>
static char buf[2][4096];
static struct iovec arr[2] = {{buf[0], 4096}, {buf[1], 4096}};
static struct iovec *gv = arr;
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    for (int k = 0; k < 64; k++) {
        arr[1].iov_len = 100 + k;
        if (preadv(fd, IOV, 2, (off_t)k * 8192) < 0)
            return 1;
    }
    return 0;
}
"""
    _, sl, data = sliced(tmp_path, body.replace("IOV", "arr"))
    assert sl.ok, sl.refusals
    assert "__fs_ptx_iov(fd, (*__fs_ptg_arr_p), 2, (off_t)k * 8192, 1, 2)" in thread_text(sl, data)
    _, sl, _ = sliced(tmp_path, body.replace("IOV", "gv"))
    assert [why for _, why in sl.refusals] == [
        "`preadv` may read the program's memory through `gv`"]


def test_a_lead_reads_buffer_is_declared_when_only_the_read_names_it(tmp_path):
    # fgets(line, MAXLINE, f): no `sizeof line` names the buffer, yet the thread reads
    # into it, so its declaration is kept (it was dropped: the clone did not compile).
    program, sl, _ = sliced(tmp_path, """\
#define MAXLINE 256
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "r");
    if (!f) return 1;
    char line[MAXLINE];
    long sum = 0;
    while (fgets(line, MAXLINE, f))
        sum += atol(line);
    printf("%ld\\n", sum);
    return 0;
}
""")
    assert sl.ok, sl.refusals
    assert 10 in kept_lines(program, sl, "main")            # char line[MAXLINE];


def test_reads_in_a_file_without_main_get_runs_anchored_at_its_functions(tmp_path):
    # Each file is sliced alone: main's file, which reaches no read, gets no thread (its
    # --report says why, stderr nothing); the file that reads gets one whose runs start at
    # the entry of its function other files call (foresight_pt_anchor), the program's
    # descriptor argument reopened on the thread at its offset.  Called three times, each
    # after the last run is over: three runs, every read predicted, the output the
    # program's own.
    import json
    import os
    import subprocess
    import sys
    (tmp_path / "m1.c").write_text(HEAD + """\
long sum_file(int fd, long n);
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    for (int k = 1; k <= 3; k++) {
        printf("%ld\\n", sum_file(fd, 8 * k));
        usleep(300000); /* the thread's run is over before the next call anchors one */
    }
    return 0;
}
""")
    (tmp_path / "m2.c").write_text(HEAD + """\
static long first(const char *b) { return b[0]; }
long sum_file(int fd, long n)
{
    char b[4096];
    long s = 0;
    for (long i = n - 1; i >= 0; i--)
        s += pread(fd, b, sizeof b, i * 4096) > 0 ? first(b) : 0;
    return s;
}
""")
    (tmp_path / "d.bin").write_bytes(b"".join(bytes([k + 1]) * 4096 for k in range(24)))
    cli = [sys.executable, "-m", "foresight.cli", "cc", "--prefetch-thread", "-O2"]
    p = subprocess.run([*cli, "--report-json", "r1.json", "-c", "m1.c"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0 and "no prefetch thread" not in p.stderr, p.stderr
    r1 = json.dumps(json.loads((tmp_path / "r1.json").read_text()))
    assert "main reaches no read of a file in this file" in r1
    p = subprocess.run([*cli, "--report-json", "r2.json", "-c", "m2.c"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert "anchored at `sum_file` (line" in (tmp_path / "r2.json").read_text()
    p = subprocess.run([*cli, "m1.o", "m2.o", "-o", "m"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    subprocess.run(["cc", "-O2", "m1.c", "m2.c", "-o", "plain"], cwd=tmp_path, check=True)
    want = subprocess.run(["./plain", "d.bin"], cwd=tmp_path, capture_output=True, text=True)
    env = dict(os.environ, FORESIGHT_STATS=str(tmp_path / "st.json"), FORESIGHT_PT_DRAIN="1")
    got = subprocess.run(["./m", "d.bin"], cwd=tmp_path, capture_output=True, text=True,
                         env=env)
    assert (got.returncode, got.stdout, got.stderr) == (0, want.stdout, want.stderr)
    g = json.loads((tmp_path / "st.json").read_text())["global"]
    assert g["pt_started"] == 1 and g["pt_stopped"] is None
    assert g["pt_runs"] == 3 and g["pt_gave_up"] == 0 and g["pt_mispredicts"] == 0
    assert g["pt_calls"] == 8 + 16 + 24


def test_anchors_are_the_functions_other_files_call_and_their_arguments_safe(tmp_path):
    # A file without main: runs start at its non-static functions that reach a read. A
    # path (`const char *` only opened) is copied and a descriptor becomes the thread's
    # handle; a struct pointer the slice reads through, or a `const char *` it indexes
    # itself (a buffer, perhaps not NUL-terminated), is the program's memory: that
    # function anchors no runs, and its reads are not the thread's.
    from foresight.compiler.analysis.ioslice import anchor_roots
    from foresight.compiler.rewrite.prefetch_thread import ThreadWriter

    src = tmp_path / "io.c"
    src.write_text(HEAD + """\
struct cfg { int fd; long n; };
static long helper(int fd, long i) { char b[64]; return pread(fd, b, 64, i * 4096); }
long by_path(const char *path, long n)
{
    int fd = open(path, O_RDONLY);
    long s = 0;
    for (long i = n - 1; i >= 0; i--)
        s += helper(fd, i);
    close(fd);
    return s;
}
long by_fd(int fd, long n, char *buf)
{
    long s = 0;
    for (long i = n - 1; i >= 0; i--)
        s += pread(fd, buf, 64, i * 4096);
    return s;
}
long by_cfg(struct cfg *c)
{
    char b[64];
    long s = 0;
    for (long i = c->n - 1; i >= 0; i--)
        s += pread(c->fd, b, 64, i * 4096);
    return s;
}
long by_header(int fd, const char *hdr)
{
    char b[64];
    return pread(fd, b, 64, (hdr[0] - '0') * 4096);
}
long into(int fd, unsigned char hdr[16], long at)
{
    return pread(fd, hdr, 16, at) == 16 ? hdr[3] : -1;
}
""")
    program = parse_program(src, [])
    data = src.read_bytes()
    roots = anchor_roots(program, data)
    assert roots == ("by_path", "by_fd", "by_cfg", "by_header", "into")  # not the static
    sl = slice_program(program, data, roots)
    # (an array parameter is a pointer: the caller's memory, which the thread's lead read
    # would have written)
    assert set(sl.unanchored) == {"by_cfg", "by_header", "into"}
    assert "parameter of `by_cfg`" in sl.unanchored["by_cfg"][1]
    assert "used as more than a string" in sl.unanchored["by_header"][1]
    sl = slice_program(program, data, ("by_path", "by_fd"))
    assert sl.ok and sl.anchors == ("by_path", "by_fd")
    w = ThreadWriter(sl, data, "io.c")
    assert [k for _, k, _ in w.anchor_params(program.function("by_path"))] == ["string",
                                                                                "value"]
    assert [k for _, k, _ in w.anchor_params(program.function("by_fd"))] == [
        "fd", "value", "pointer"]
    text = thread_text(sl, data)
    assert "foresight_pt_adopt(__fs_ptx_by_fd_a.a0, __fs_ptx_by_fd_o0)" in text
    assert "= foresight_pt_strdup((const char *)__fs_ptx_by_path_a.a0);" in text
    assert "foresight_pt_anchor(__fs_ptx_by_fd_init, __fs_ptx_by_fd_run" in "".join(
        i.text for i in thread_insertions(sl, data, "io.c"))


def test_an_anchored_run_adopts_a_descriptor_kept_in_a_file_scope_variable(tmp_path):
    # `static int dbfd`, opened by one function, read by another: each run has the thread
    # reopen the program's file behind the copy's value (its own handle, the program's
    # offset), which holds the program's number otherwise.
    src = tmp_path / "db.c"
    src.write_text(HEAD + """\
static int dbfd = -1;
int db_open(const char *path) { dbfd = open(path, O_RDONLY); return dbfd < 0 ? -1 : 0; }
long db_scan(long n)
{
    char b[64];
    long s = 0;
    for (long i = n - 1; i >= 0; i--)
        s += pread((int)dbfd, b, sizeof b, i * 4096);
    return s;
}
""")
    from foresight.compiler.analysis.ioslice import anchor_roots
    program = parse_program(src, [])
    data = src.read_bytes()
    sl = slice_program(program, data, anchor_roots(program, data))
    assert sl.ok and sl.anchors == ("db_open", "db_scan")
    text = thread_text(sl, data)
    assert "if (*__fs_ptg_dbfd_p > 0) *__fs_ptg_dbfd_p = foresight_pt_adopt(" in text
    assert "__fs_ptg_dbfd_o = *__fs_ptg_dbfd_p > 0 ? foresight_pt_offset(" in text


def test_a_function_made_static_by_a_macro_gets_a_clone_that_compiles(tmp_path):
    # `#define STATIC static`: the clone's `static` comes from F's own text, not a second
    # one (which did not compile: the driver fell back to the file without a thread).
    import json
    import os
    import subprocess
    import sys
    (tmp_path / "s.c").write_text(HEAD + """\
#define STATIC static
STATIC long helper(int fd, long n)
{
    char b[64];
    long s = 0;
    for (long i = n - 1; i >= 0; i--)
        s += pread(fd, b, sizeof b, i * 4096) > 0;
    return s;
}
int main(int argc, char **argv)
{
    (void)argc;
    printf("%ld\\n", helper(open(argv[1], O_RDONLY), 6));
    return 0;
}
""")
    (tmp_path / "d.bin").write_bytes(bytes(6 * 4096))
    p = subprocess.run([sys.executable, "-m", "foresight.cli", "cc", "--prefetch-thread", "-O2",
                        "-Wall", "-Wextra", "-Werror", "s.c", "-o", "s"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    env = dict(os.environ, FORESIGHT_STATS=str(tmp_path / "st.json"), FORESIGHT_PT_DRAIN="1")
    r = subprocess.run(["./s", "d.bin"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout) == (0, "6\n")
    g = json.loads((tmp_path / "st.json").read_text())["global"]
    assert g["pt_started"] == 1 and g["pt_calls"] == 6 and g["pt_mispredicts"] == 0


def test_fprintf_to_a_file_is_a_write_the_thread_does_not_format(tmp_path):
    # The program's log: a write the slice keeps (its file may be one the program reads),
    # made on the thread as a no-op that passes neither format nor arguments (s, the
    # computation's, is not sliced); an I/O call in those arguments is made alone.
    body = """\
int main(int argc, char **argv)
{
    int fd = open(argv[1], O_RDONLY);
    FILE *log = fopen("log.txt", "w");
    char b[4096];
    long s = 0;
    for (long i = 99; i >= 0; i--) {
        if (pread(fd, b, sizeof b, i * 4096) != (ssize_t)sizeof b)
            return 1;
        s += b[0];
        if (i % 10 == 0)
            fprintf(log, "%ld %ld\\n", i, LOGGED);
    }
    fclose(log);
    printf("%ld\\n", s);
    return 0;
}
"""
    program, sl, data = sliced(tmp_path, body.replace("LOGGED", "s"))
    assert sl.ok, sl.refusals
    assert 10 not in kept_lines(program, sl, "main")          # long s = 0;
    assert "foresight_pt_fprintf(log);" in thread_text(sl, data)
    program, sl, data = sliced(tmp_path, body.replace("LOGGED", "lseek(fd, 0, SEEK_CUR)"))
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "{ (void)(foresight_pt_lseek(fd, 0, SEEK_CUR" in thread
    assert "fprintf" not in thread.split("#pragma GCC diagnostic ignored")[-1]
    # i-- among the arguments: dropping them would leave the thread's loop endless
    _, sl, _ = sliced(tmp_path, body.replace("i--) {", ") {").replace("LOGGED", "i--"))
    assert (16, "the data of `fprintf` changes a variable (the thread does not pass it)") \
        in sl.refusals
    _, sl, _ = sliced(tmp_path, body.replace('"%ld %ld', '"i=%ld %ld').replace("LOGGED", "s"))
    assert sl.ok, sl.refusals                                  # `=` in the format


def test_printf_of_a_streams_state_is_predicted_not_refused(tmp_path):
    # feof(f) in printf's arguments keeps the statement (the stream's state), and printf
    # is made as a prediction passing no arguments; %n would store: refused.
    body = """\
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb");
    char b[4096];
    long s = 0;
    int used = 0;
    for (long i = 99; i >= 0; i--) {
        fseek(f, i * 4096, SEEK_SET);
        if (fread(b, 1, sizeof b, f) != sizeof b)
            break;
        s += b[0];
    }
    printf("%ld eof=%dFMT\\n", s, feof(f)ARGS);
    return used;
}
"""
    _, sl, data = sliced(tmp_path, body.replace("FMT", "").replace("ARGS", ""))
    assert sl.ok, sl.refusals
    assert "foresight_pt_printf();" in thread_text(sl, data)
    _, sl, _ = sliced(tmp_path, body.replace("FMT", "%n").replace("ARGS", ", &used"))
    assert (17, "`printf` may store through its arguments (%n, or a format that is not a "
            "literal)") in sl.refusals


def test_the_threads_fstat_is_a_system_call_on_its_own_handle(tmp_path):
    # libc's fstat, under ThreadSanitizer, takes the thread's descriptor for the program's
    # of the same number (a helper's probe: a race reported, exit 66); the thread's copy
    # is foresight_pt_fstat.
    _, sl, data = sliced(tmp_path, """\
#include <sys/stat.h>
int main(int argc, char **argv)
{
    char b[4096];
    struct stat st;
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0)
        return 1;
    for (long k = st.st_size / 4096 - 1; k >= 0; k--)
        if (pread(fd, b, sizeof b, k * 4096) < 0)
            return 1;
    return 0;
}
""")
    assert sl.ok, sl.refusals
    thread = thread_text(sl, data)
    assert "foresight_pt_fstat(fd, &st)" in thread and " fstat(" not in thread
    assert "fstat(fd, &st)" in program_text(sl, data)
