#include "/work/main/.venv/include/foresight.h"
#line 1 "benchmarks/kernels/stencil.c"
/* 2-D five-point Jacobi stencil over malloc'd variably modified arrays (paged to swap
 * when larger than memory): two sweeps A -> B -> A.  usage: stencil run - BYTES */
#include "common.h"

static void sweep(long n, long m, double (*restrict dst)[m], double (*restrict src)[m])
{
    { int __fs_on_0 = ((uintptr_t)16 + (((intmax_t)1 < (intmax_t)((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(n)))) ? (uintptr_t)(((((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(n)))) - ((((uintptr_t)1)))) - 1)) : (uintptr_t)0)) * ((((((uintptr_t)(sizeof(dst[0]))))) > UINTPTR_MAX / 2 ? (uintptr_t)0 - ((((uintptr_t)(sizeof(dst[0]))))) : ((((uintptr_t)(sizeof(dst[0])))))) + (((((uintptr_t)(sizeof(src[0]))))) > UINTPTR_MAX / 2 ? (uintptr_t)0 - ((((uintptr_t)(sizeof(src[0]))))) : ((((uintptr_t)(sizeof(src[0]))))))) + (((intmax_t)1 < (intmax_t)((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(m)))) ? (uintptr_t)(((((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(m)))) - ((((uintptr_t)1)))) - 1)) : (uintptr_t)0)) * ((uintptr_t)16)) >= (uintptr_t)16384 && foresight_active(); const int __fs_pv_0_0 = __fs_on_0 ? (((intmax_t)1 < (intmax_t)((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(m)))) ? (uintptr_t)(((((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(m)))) - ((((uintptr_t)1)))) - 1)) : (uintptr_t)0) < (uintptr_t)8191 ? 1 : 0) : 0; uintptr_t __fs_pc_0_j8 = 0; uintptr_t __fs_pc_0_i7 = 0; uintptr_t __fs_fp_0_0 = (uintptr_t)8, __fs_fp_0_0_1 = 0; __fs_fp_0_0 += (uintptr_t)8 * ((intmax_t)1 < (intmax_t)((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(m)))) ? (uintptr_t)(((((((uintptr_t)0 - (uintptr_t)1) + ((uintptr_t)(m)))) - ((((uintptr_t)1)))) - 1)) : (uintptr_t)0); struct foresight_stream __fs_sp_0[4]; uintptr_t __fs_d_0[4] = {0}; static const struct foresight_nest_stream __fs_ns_0[] = {{0, 0, FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}, {0, 0, FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}, {1, 0, FORESIGHT_STREAM_REGION | FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}, {1, 0, FORESIGHT_STREAM_REGION | FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}}; static const struct foresight_nest_pipe __fs_np_0[] = {{0, 0}, {0, 0}}; static const struct foresight_nest __fs_nest_0 = {__fs_ns_0, __fs_np_0, 4, 2, 4096, 65536}; if (__fs_on_0) { const uintptr_t __fs_nv[] = {(((uintptr_t)8)) * (uintptr_t)(1), 0, 0, (__fs_pv_0_0 == 0 ? 0u : FORESIGHT_STREAM_IDLE), (((uintptr_t)8)) * (uintptr_t)(1), 0, 0, (__fs_pv_0_0 == 0 ? 0u : FORESIGHT_STREAM_IDLE), (((uintptr_t)(sizeof(dst[0])))) * (uintptr_t)(1), __fs_fp_0_0, __fs_fp_0_0_1, (__fs_pv_0_0 == 1 ? 0u : FORESIGHT_STREAM_IDLE), (((uintptr_t)(sizeof(src[0])))) * (uintptr_t)(1), __fs_fp_0_0, __fs_fp_0_0_1, (__fs_pv_0_0 == 1 ? 0u : FORESIGHT_STREAM_IDLE)}; __fs_on_0 = foresight_nest_enter(&__fs_nest_0, __fs_sp_0, __fs_nv, __fs_d_0); } if (__fs_on_0) { for (long i = 1; i < n - 1; i++)
        { { if (__fs_pv_0_0 == 1) { if (FORESIGHT_COUNTING(__fs_pc_0_i7 > 1)) __fs_pc_0_i7--; else { FORESIGHT_SITE(__fs_site_0_1, "dst[i][j] (across i)"); FORESIGHT_SITE(__fs_site_0_3, "src[i + 1][j] (across i)"); static struct foresight_site *const __fs_ss[] = {&__fs_site_0_1, &__fs_site_0_3}; const uintptr_t __fs_at[] = {((uintptr_t)(dst) + (((uintptr_t)(sizeof(dst[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((((uintptr_t)1)))), ((uintptr_t)(dst) + (((uintptr_t)(sizeof(dst[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((((uintptr_t)1)))), ((uintptr_t)(src) + (((uintptr_t)(sizeof(src[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((((uintptr_t)1))) + (((uintptr_t)(sizeof(src[0]))))), ((uintptr_t)(src) + (((uintptr_t)(sizeof(src[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((((uintptr_t)1))) + (((uintptr_t)0 - (uintptr_t)1 * (uintptr_t)(sizeof(src[0])))))}; __fs_pc_0_i7 = foresight_streams_step(__fs_sp_0 + 2, 2, __fs_ss, __fs_pc_0_i7, __fs_at, (((uintmax_t)(n - 1) - (uintmax_t)(i)) - 1)); } } } { __fs_pc_0_j8 = 0; for (long j = 1; j < m - 1; j++)
            { uintmax_t __fs_sn_0_j8 = (((uintmax_t)(m - 1) - (uintmax_t)(j)) - 1); if (__fs_sn_0_j8 != UINTMAX_MAX) __fs_sn_0_j8++; if (__fs_pv_0_0 == 0) { FORESIGHT_SITE(__fs_site_0_0, "dst[i][j] (across j)"); FORESIGHT_SITE(__fs_site_0_2, "src[i + 1][j] (across j)"); static struct foresight_site *const __fs_ss[] = {&__fs_site_0_0, &__fs_site_0_2}; const uintptr_t __fs_at[] = {((uintptr_t)(dst) + (((uintptr_t)(sizeof(dst[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)(j))), ((uintptr_t)(dst) + (((uintptr_t)(sizeof(dst[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)(j))), ((uintptr_t)(src) + (((uintptr_t)(sizeof(src[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)(j)) + (((uintptr_t)(sizeof(src[0]))))), ((uintptr_t)(src) + (((uintptr_t)(sizeof(src[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)(j)) + (((uintptr_t)0 - (uintptr_t)1 * (uintptr_t)(sizeof(src[0])))))}; __fs_pc_0_j8 = foresight_streams_step(__fs_sp_0, 2, __fs_ss, __fs_pc_0_j8, __fs_at, __fs_sn_0_j8 - 1); if (__fs_pc_0_j8 >= 1 && __fs_pc_0_j8 < __fs_sn_0_j8) __fs_sn_0_j8 = __fs_pc_0_j8; __fs_pc_0_j8 = 1; } for (uintmax_t __fs_sk_0_j8 = __fs_sn_0_j8; __fs_sk_0_j8 != 0; --__fs_sk_0_j8 != 0 ? (void)(j++) : (void)0) { dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] +
                               src[i][j + 1]); } } } } } else {
#line 7 "benchmarks/kernels/stencil.c"
    for (long i = 1; i < n - 1; i++)
        for (long j = 1; j < m - 1; j++)
            dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] +
                               src[i][j + 1]);
#line 10 "benchmarks/kernels/stencil.c"
                                              } }
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: stencil run - BYTES\n"); return 2; }
    if (strcmp(argv[1], "create") == 0) return 0;
    size_t bytes = arg_size(argv[3]) / 2;
    long m = 4096, n = (long)(bytes / sizeof(double) / (size_t)m);
    double (*A)[m] = malloc(sizeof(double[n][m]));
    double (*B)[m] = malloc(sizeof(double[n][m]));
    if (A == NULL || B == NULL) { fprintf(stderr, "stencil: out of memory\n"); return 2; }
    for (long i = 0; i < n; i++)
        for (long j = 0; j < m; j++) {
            A[i][j] = (double)((i * 31 + j * 17) % 1009);
            B[i][j] = 0;
        }
    double t0 = now();
    sweep(n, m, B, A);
    sweep(n, m, A, B);
    double t1 = now(), s = 0;
    { int __fs_on_2 = ((uintptr_t)8 + (((intmax_t)0 < (intmax_t)((((uintptr_t)(n)))) ? (uintptr_t)(((((((uintptr_t)(n)))) - ((uintptr_t)0)) - 1) / (uintptr_t)7) : (uintptr_t)0)) * ((((((uintptr_t)(sizeof(A[0])))) * (uintptr_t)(7)) > UINTPTR_MAX / 2 ? (uintptr_t)0 - ((((uintptr_t)(sizeof(A[0])))) * (uintptr_t)(7)) : ((((uintptr_t)(sizeof(A[0])))) * (uintptr_t)(7)))) + (((intmax_t)0 < (intmax_t)((((uintptr_t)(m)))) ? (uintptr_t)(((((((uintptr_t)(m)))) - ((uintptr_t)0)) - 1) / (uintptr_t)5) : (uintptr_t)0)) * ((uintptr_t)40)) >= (uintptr_t)16384 && foresight_active(); const int __fs_pv_2_0 = __fs_on_2 ? (((intmax_t)0 < (intmax_t)((((uintptr_t)(m)))) ? (uintptr_t)(((((((uintptr_t)(m)))) - ((uintptr_t)0)) - 1) / (uintptr_t)5) : (uintptr_t)0) < (uintptr_t)1638 ? 1 : 0) : 0; uintptr_t __fs_pc_2_j32 = 0; uintptr_t __fs_pc_2_i31 = 0; uintptr_t __fs_fp_2_0 = (uintptr_t)8, __fs_fp_2_0_1 = 0; __fs_fp_2_0 += (uintptr_t)40 * ((intmax_t)0 < (intmax_t)((((uintptr_t)(m)))) ? (uintptr_t)(((((((uintptr_t)(m)))) - ((uintptr_t)0)) - 1) / (uintptr_t)5) : (uintptr_t)0); struct foresight_stream __fs_sp_2[2]; uintptr_t __fs_d_2[4] = {0}; static const struct foresight_nest_stream __fs_ns_2[] = {{0, 0, FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}, {1, 0, FORESIGHT_STREAM_REGION | FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}}; static const struct foresight_nest_pipe __fs_np_2[] = {{0, 0}, {0, 0}}; static const struct foresight_nest __fs_nest_2 = {__fs_ns_2, __fs_np_2, 2, 2, 4096, 65536}; if (__fs_on_2) { const uintptr_t __fs_nv[] = {(((uintptr_t)8)) * (uintptr_t)(5), 0, 0, (__fs_pv_2_0 == 0 ? 0u : FORESIGHT_STREAM_IDLE), (((uintptr_t)(sizeof(A[0])))) * (uintptr_t)(7), __fs_fp_2_0, __fs_fp_2_0_1, (__fs_pv_2_0 == 1 ? 0u : FORESIGHT_STREAM_IDLE)}; __fs_on_2 = foresight_nest_enter(&__fs_nest_2, __fs_sp_2, __fs_nv, __fs_d_2); } if (__fs_on_2) { for (long i = 0; i < n; i += 7)
        { { if (__fs_pv_2_0 == 1) { if (FORESIGHT_COUNTING(__fs_pc_2_i31 > 1)) __fs_pc_2_i31--; else { FORESIGHT_SITE(__fs_site_2_1, "A[i][j] (across i)"); static struct foresight_site *const __fs_ss[] = {&__fs_site_2_1}; const uintptr_t __fs_at[] = {((uintptr_t)(A) + (((uintptr_t)(sizeof(A[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)0)), ((uintptr_t)(A) + (((uintptr_t)(sizeof(A[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)0))}; __fs_pc_2_i31 = foresight_streams_step(__fs_sp_2 + 1, 1, __fs_ss, __fs_pc_2_i31, __fs_at, ((((uintmax_t)(n) - (uintmax_t)(i)) - 1) / (uintmax_t)7)); } } } { __fs_pc_2_j32 = 0; for (long j = 0; j < m; j += 5)
            { uintmax_t __fs_sn_2_j32 = ((((uintmax_t)(m) - (uintmax_t)(j)) - 1) / (uintmax_t)5); if (__fs_sn_2_j32 != UINTMAX_MAX) __fs_sn_2_j32++; if (__fs_pv_2_0 == 0) { FORESIGHT_SITE(__fs_site_2_0, "A[i][j] (across j)"); static struct foresight_site *const __fs_ss[] = {&__fs_site_2_0}; const uintptr_t __fs_at[] = {((uintptr_t)(A) + (((uintptr_t)(sizeof(A[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)(j))), ((uintptr_t)(A) + (((uintptr_t)(sizeof(A[0])))) * ((uintptr_t)(i)) + (((uintptr_t)8)) * ((uintptr_t)(j)))}; __fs_pc_2_j32 = foresight_streams_step(__fs_sp_2, 1, __fs_ss, __fs_pc_2_j32, __fs_at, __fs_sn_2_j32 - 1); if (__fs_pc_2_j32 >= 1 && __fs_pc_2_j32 < __fs_sn_2_j32) __fs_sn_2_j32 = __fs_pc_2_j32; __fs_pc_2_j32 = 1; } for (uintmax_t __fs_sk_2_j32 = __fs_sn_2_j32; __fs_sk_2_j32 != 0; --__fs_sk_2_j32 != 0 ? (void)(j += 5) : (void)0) { s += A[i][j]; } } } } } else {
#line 31 "benchmarks/kernels/stencil.c"
    for (long i = 0; i < n; i += 7)
        for (long j = 0; j < m; j += 5)
            s += A[i][j];
#line 33 "benchmarks/kernels/stencil.c"
                         } }
    printf("checksum %.6f\naccess_seconds %.3f\n", s, t1 - t0);
    free(A);
    free(B);
    return 0;
}
