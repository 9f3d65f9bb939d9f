/* Ping-pong between ranks 0 and 1 in C, for comparison with the kit's Python ping-pong
 * (mpi_exercises/bench/pingpong.py).  OSU-style method: per size, warm-up round trips, then timed
 * round trips (10000 for sizes up to 8 KiB, 1000 above), one-way time = half a round trip,
 * MPI_Wtime; each rank sends from one buffer and receives into another (as the Python
 * ping-pong does: one buffer for both keeps a large message in cache), both page-aligned, on
 * ordinary pages (MADV_NOHUGEPAGE, as mpi_exercises/pages.py asks for) and written before
 * timing (a calloc'd buffer never written reads the kernel's one shared zero page, always in
 * cache).  Each round trip is timed alone, so min and median are reported like the
 * Python benchmark's; the JSON on stdout has the same "results" fields (bytes, samples,
 * min_s, median_s).
 *
 *   make pingpong-c      (builds with the MPI wheel's mpicc, runs on 2 ranks, writes
 *                         book/data/pingpong_c.json)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A page-aligned buffer of n bytes on ordinary pages, every byte written. */
static char *buffer(size_t n, int fill)
{
    void *p = NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign(&p, (size_t)page, n) != 0) return NULL;
#ifdef MADV_NOHUGEPAGE
    madvise(p, n, MADV_NOHUGEPAGE);
#endif
    for (size_t i = 0; i < n; i++) ((char *)p)[i] = fill < 0 ? (char)(i % 251) : (char)fill;
    return p;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "pingpong needs at least 2 ranks: mpiexec -n 2 ./pingpong\n");
        MPI_Finalize();
        return 2;
    }
    const int max_log = 22;                       /* 0 B, then 1 B ... 4 MiB */
    const size_t max_bytes = (size_t)1 << max_log;
    char *sbuf = buffer(max_bytes, -1), *rbuf = buffer(max_bytes, 0xFF);
    double *t = malloc(10000 * sizeof(double));
    int peer = 1 - rank;
    if (rank == 0) printf("{\"benchmark\": \"pingpong-c\", \"results\": [");
    for (int k = -1; k <= max_log; k++) {
        size_t n = k < 0 ? 0 : (size_t)1 << k;
        int iters = n <= 8192 ? 10000 : 1000, warmup = n <= 8192 ? 1000 : 100;
        for (int i = -warmup; i < iters && rank < 2; i++) {
            if (rank == 0) {
                double t0 = MPI_Wtime();
                MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (i >= 0) t[i] = (MPI_Wtime() - t0) / 2;
            } else {
                MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        if (rank == 0) {
            qsort(t, iters, sizeof(double), cmp);
            double med = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
            printf("%s\n {\"bytes\": %zu, \"samples\": %d, \"min_s\": %.9e, \"median_s\": %.9e}",
                   k < 0 ? "" : ",", n, iters, t[0], med);
        }
    }
    if (rank == 0) printf("\n]}\n");
    free(sbuf);
    free(rbuf);
    free(t);
    MPI_Finalize();
    return 0;
}
