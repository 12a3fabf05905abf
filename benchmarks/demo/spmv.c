/* spmv: y = A x for a sparse matrix A in compressed sparse row (CSR) form.
 *
 * An ordinary C program, as a user writes it: the matrix and the vector are binary
 * files mapped with mmap (too large to read into memory), the product is the textbook
 * CSR loop, and the result is summarised.  No foresight calls, no pragmas.
 *
 * MATRIX: long rows, cols, nnz; long rowptr[rows + 1]; double val[nnz]; int col[nnz]
 * VECTOR: double x[cols]
 *
 * usage: spmv MATRIX VECTOR
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void *map(const char *path, size_t *bytes)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        fprintf(stderr, "spmv: %s: empty or unreadable\n", path);
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        perror(path);
        return NULL;
    }
    *bytes = (size_t)st.st_size;
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: spmv MATRIX VECTOR\n");
        return 2;
    }
    size_t mbytes, xbytes;
    const long *head = map(argv[1], &mbytes);
    const double *x = map(argv[2], &xbytes);
    if (head == NULL || x == NULL)
        return 1;
    long rows = head[0], cols = head[1], nnz = head[2];
    if (rows < 1 || cols < 1 || nnz < 0 ||
        mbytes != (size_t)(3 + rows + 1) * sizeof(long) + (size_t)nnz * (sizeof(int) +
                                                                        sizeof(double)) ||
        xbytes != (size_t)cols * sizeof(double)) {
        fprintf(stderr, "spmv: %s and %s do not hold a %ld x %ld matrix and its vector\n",
                argv[1], argv[2], rows, cols);
        return 1;
    }
    const long *rowptr = head + 3;
    const double *val = (const double *)(rowptr + rows + 1);
    const int *col = (const int *)(val + nnz);
    double *y = calloc((size_t)rows, sizeof *y);
    if (y == NULL) {
        fprintf(stderr, "spmv: out of memory\n");
        return 1;
    }

    for (long i = 0; i < rows; i++) {
        double s = 0.0;
        for (long k = rowptr[i]; k < rowptr[i + 1]; k++)
            s += val[k] * x[col[k]];
        y[i] = s;
    }

    double sum = 0.0, norm = 0.0;
    for (long i = 0; i < rows; i++) {
        sum += y[i];
        norm += y[i] * y[i];
    }
    printf("%ld x %ld matrix, %ld nonzeros\n", rows, cols, nnz);
    printf("sum(y) %.9f, |y| %.9f, y[0] %.9f, y[last] %.9f\n", sum, sqrt(norm), y[0],
           y[rows - 1]);
    free(y);
    return 0;
}
