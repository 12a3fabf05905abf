/* IS: integer sort by bucket sort (counting sort), after the NAS Parallel Benchmarks' IS
 * and the BUK program of the paper (its Figure 17).
 *
 * N keys in [0, MAX_KEY) are drawn as in NPB IS: each key is MAX_KEY/4 times the sum of
 * four uniform numbers from the NPB generator, so the key values are bell-shaped.  Each
 * iteration changes two keys (so no iteration repeats the previous one) and then runs
 * the three phases of Figure 17:
 *   density  keyden[key[i]]++                     direct stream, indirect into keyden
 *   rank     running sum of keyden, then           direct streams, indirect into keyden
 *            rank[i] = --keyden[key[i]]
 *   copy     key2[rank[i]] = key[i]                direct streams, indirect into key2
 * The main arrays are key and key2 (N ints each), rank (N longs: positions, so any N
 * that fits in memory sorts) and keyden (MAX_KEY ints, about N/16 as in NPB's classes,
 * so the density array fits in memory as in the paper).  The copy phase's random target,
 * key2, is a quarter of the data: at 3x data/memory it is 3/4 of memory, close to the
 * paper's IRIX BUK (64 MB of key2 in 75 MB).
 *
 * Verification (no NPB tables): key2 is sorted; key2 is a permutation of key (an
 * order-independent hash of the two multisets matches); and for a few sample keys the
 * computed rank lies within [number of smaller keys, that plus the number of equal keys),
 * both counted directly from key in a separate pass. */
#include "nas_common.h"

#define NSAMPLES 5

/* An order-independent fingerprint of one key: the multiset hash is the wrapping sum. */
static uint64_t key_hash(int k)
{
    uint64_t z = (uint64_t)(unsigned)k + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    struct nas_args args = nas_parse(argc, argv, 64, 6);
    int iters = args.iters;

    /* Sizes: 16 bytes per key (key, key2, rank) plus MAX_KEY ints of density, MAX_KEY a
     * power of two near N/16. */
    double bytes = (double)args.mb * 1048576.0;
    long max_key = 16;
    while ((double)max_key * 2 * 16 * 16.25 <= bytes && max_key < (1L << 30))
        max_key *= 2;
    long n = (long)((bytes - 4.0 * (double)max_key) / 16.0);
    if (n < 2L * iters + 2 || n < 1024)
        nas_usage(argv[0], "--mb too small for this many iterations");

    int *key = nas_array(&args, "key", (size_t)n * sizeof(int));
    long *rank = nas_array(&args, "rank", (size_t)n * sizeof(long));
    int *key2 = nas_array(&args, "key2", (size_t)n * sizeof(int));
    int *keyden = nas_array(&args, "keyden", (size_t)max_key * sizeof(int));
    printf("IS keys %ld max_key %ld iterations %d\n", n, max_key, iters);

    nas_phase("keygen");
    uint64_t seed = NAS_RAND_SEED;
    double quarter = (double)(max_key / 4);
    for (long i = 0; i < n; i++) {
        double x = nas_randlc(&seed, NAS_RAND_A);
        x += nas_randlc(&seed, NAS_RAND_A);
        x += nas_randlc(&seed, NAS_RAND_A);
        x += nas_randlc(&seed, NAS_RAND_A);
        key[i] = (int)(quarter * x);
    }

    long sample[NSAMPLES];
    for (int s = 0; s < NSAMPLES; s++)
        sample[s] = (long)((double)n * (s + 0.5) / NSAMPLES) + s;

    for (int it = 1; it <= iters; it++) {
        key[it] = it;
        key[it + iters] = (int)max_key - it;

        nas_phase("density");
        for (long k = 0; k < max_key; k++)
            keyden[k] = 0;
        for (long i = 0; i < n; i++)
            keyden[key[i]] = keyden[key[i]] + 1;

        nas_phase("rank");
        for (long k = 1; k < max_key; k++)
            keyden[k] = keyden[k] + keyden[k - 1];
        for (long i = 0; i < n; i++) {
            keyden[key[i]] = keyden[key[i]] - 1;
            rank[i] = keyden[key[i]];
        }

        nas_phase("copy");
        for (long i = 0; i < n; i++)
            key2[rank[i]] = key[i];

        printf("iteration %d ranks", it);
        for (int s = 0; s < NSAMPLES; s++)
            printf(" %ld", rank[sample[s]]);
        printf("\n");
    }

    nas_phase("verify");
    long unsorted = 0;
    uint64_t hash_key = 0, hash_key2 = 0, position_sum = 0;
    for (long i = 0; i < n; i++) {
        if (i > 0 && key2[i] < key2[i - 1])
            unsorted++;
        hash_key2 += key_hash(key2[i]);
        position_sum += (uint64_t)key2[i] * (uint64_t)(i + 1);
    }
    long below[NSAMPLES] = { 0 }, equal[NSAMPLES] = { 0 };
    int sample_key[NSAMPLES];
    for (int s = 0; s < NSAMPLES; s++)
        sample_key[s] = key[sample[s]];
    for (long i = 0; i < n; i++) {
        hash_key += key_hash(key[i]);
        for (int s = 0; s < NSAMPLES; s++) {
            below[s] += key[i] < sample_key[s];
            equal[s] += key[i] == sample_key[s];
        }
    }
    int misranked = 0;
    for (int s = 0; s < NSAMPLES; s++) {
        long r = rank[sample[s]];
        misranked += r < below[s] || r >= below[s] + equal[s];
    }
    printf("sorted keys checksum %016llx\n", (unsigned long long)position_sum);

    if (unsorted)
        return nas_verdict(0, "(%ld keys out of order)", unsorted);
    if (hash_key != hash_key2)
        return nas_verdict(0, "(sorted keys are not a permutation of the keys)");
    if (misranked)
        return nas_verdict(0, "(%d of %d sample keys ranked wrongly)", misranked, NSAMPLES);
    return nas_verdict(1, "");
}
