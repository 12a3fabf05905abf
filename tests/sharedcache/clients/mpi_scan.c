/* An MPI client of `foresight cluster run --launcher mpiexec`: each rank sums its share
 * of the disk of 64-bit words it finds in FORESIGHT_DISK (rank r of n takes words
 * [r*N/n, (r+1)*N/n), mapped shared), checks that the harness gave it the client id of
 * its MPI rank, and rank 0 prints the sum of the parts (MPI_Reduce).  Usage: mpi_scan
 * [abort] (abort: the last rank calls MPI_Abort(..., 5) before the reduction) */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *client = getenv("FORESIGHT_CLIENT"), *path = getenv("FORESIGHT_DISK");
    if (client == NULL || path == NULL || atoi(client) != rank) {
        fprintf(stderr, "rank %d: FORESIGHT_CLIENT %s\n", rank, client ? client : "unset");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long words = (long)(st.st_size / 8);
    const uint64_t *a = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) {
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long lo = rank * words / size, hi = (rank + 1) * words / size;
    uint64_t part = 0;
    for (long i = lo; i < hi; i++)
        part += a[i];
    printf("rank %d of %d part %llu\n", rank, size, (unsigned long long)part);
    if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == size - 1) {
        fprintf(stderr, "rank %d aborting\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 5);
    }
    unsigned long long mine = part, total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("total %llu\n", total);
    MPI_Finalize();
    return 0;
}
