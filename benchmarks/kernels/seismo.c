/* Event detection on a multichannel recording (a seismic array, say) kept in a file
 * mapped read-only: a 4 KiB header, then the channels one after another (a struct of
 * arrays on disk), reached through a struct holding a pointer per channel.  Passes: the
 * common average across channels at every sample (the channel loop innermost: NCHAN
 * streams far apart in the file), then per channel an STA/LTA trigger on the
 * re-referenced signal (running sums over windows trailing 4 KiB and 128 KiB behind)
 * and an amplitude histogram (a helper picks the bin).
 * usage: seismo create|run FILE BYTES */
#include "common.h"

#define NCHAN 16
#define HEADER 4096
#define NSTA 512         /* short-term window, samples */
#define NLTA 16384       /* long-term window, samples */
#define THRESH 3.0
#define NBIN 64
#define RANGE 8.0

struct header {
    char magic[8];
    long nchan;
    long nsamp;
    double rate;
};

struct recording {
    long nsamp;
    int nchan;
    double rate;
    double *chan[NCHAN];
};

static long hist[NCHAN][NBIN];
static long ntrig[NCHAN];

static int bin_of(double y)
{
    int b = (int)((y + RANGE) * (NBIN / (2.0 * RANGE)));
    if (b < 0)
        b = 0;
    if (b >= NBIN)
        b = NBIN - 1;
    return b;
}

/* A triangle wave per channel, noise, and a burst every so often. */
static void synthesize(double *x, long nsamp, int c)
{
    long t;
    unsigned int seed = 1000u + (unsigned int)c;
    long period = 200 + 37 * c;
    for (t = 0; t < nsamp; t++) {
        long ph = t % period;
        double tri = (ph < period / 2 ? ph : period - ph) * (4.0 / period) - 1.0;
        seed = seed * 1103515245u + 12345u;
        double noise = ((int)((seed >> 16) % 2001) - 1000) * 1e-3;
        double burst = (t / 1024 + c) % 13 == 0 ? 3.0 * noise : 0.0;
        x[t] = tri + 0.5 * noise + burst;
    }
}

static void common_average(const struct recording *rec, double *car)
{
    long t;
    int c;
    for (t = 0; t < rec->nsamp; t++) {
        double s = 0.0;
        for (c = 0; c < rec->nchan; c++)
            s += rec->chan[c][t];
        car[t] = s / rec->nchan;
    }
}

static void detect(const struct recording *rec, const double *car)
{
    long t;
    int c;
    for (c = 0; c < rec->nchan; c++) {
        const double *x = rec->chan[c];
        double sta = 0.0, lta = 0.0;
        for (t = 0; t < rec->nsamp; t++) {
            double y = x[t] - car[t];
            sta += y * y;
            lta += y * y;
            if (t >= NSTA) {
                double yo = x[t - NSTA] - car[t - NSTA];
                sta -= yo * yo;
            }
            if (t >= NLTA) {
                double yo = x[t - NLTA] - car[t - NLTA];
                lta -= yo * yo;
                if (sta * NLTA > THRESH * lta * NSTA)
                    ntrig[c]++;
            }
            hist[c][bin_of(y)]++;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: seismo create|run FILE BYTES\n"); return 2; }
    size_t bytes = arg_size(argv[3]);
    int create = strcmp(argv[1], "create") == 0;
    long nsamp = (long)((bytes - HEADER) / (NCHAN * sizeof(double)));
    if (bytes <= HEADER || nsamp < NLTA) { fprintf(stderr, "seismo: BYTES too small\n"); return 2; }
    int fd = open(argv[2], create ? O_RDWR | O_CREAT : O_RDONLY, 0644);
    if (fd < 0 || (create && ftruncate(fd, (off_t)bytes) != 0)) { perror(argv[2]); return 2; }
    char *base = mmap(NULL, bytes, create ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
                      fd, 0);
    if (base == MAP_FAILED) { perror("mmap"); return 2; }
    close(fd);
    struct header *h = (struct header *)base;
    double *data = (double *)(base + HEADER);
    int c;
    if (create) {
        memcpy(h->magic, "SEISMO1", 8);
        h->nchan = NCHAN;
        h->nsamp = nsamp;
        h->rate = 100.0;
        for (c = 0; c < NCHAN; c++)
            synthesize(data + c * nsamp, nsamp, c);
        msync(base, bytes, MS_SYNC);
        return 0;
    }
    if (memcmp(h->magic, "SEISMO1", 8) != 0 || h->nchan != NCHAN || h->nsamp != nsamp) {
        fprintf(stderr, "seismo: %s is not a recording of %zu bytes\n", argv[2], bytes);
        return 2;
    }
    struct recording rec;
    rec.nsamp = h->nsamp;
    rec.nchan = (int)h->nchan;
    rec.rate = h->rate;
    for (c = 0; c < rec.nchan; c++)
        rec.chan[c] = data + c * rec.nsamp;
    double *car = malloc(nsamp * sizeof(double));
    if (car == NULL) { fprintf(stderr, "seismo: out of memory\n"); return 2; }
    double t0 = now();
    common_average(&rec, car);
    detect(&rec, car);
    double t1 = now();
    long trig = 0;
    unsigned long hsum = 0;
    double carsum = 0;
    int b;
    for (c = 0; c < NCHAN; c++) {
        trig += ntrig[c];
        for (b = 0; b < NBIN; b++)
            hsum = hsum * 31 + (unsigned long)hist[c][b];
    }
    for (long t = 0; t < nsamp; t += 7)
        carsum += car[t];
    printf("checksum triggers %ld histogram %lu car %.6e\naccess_seconds %.3f\n", trig, hsum,
           carsum, t1 - t0);
    free(car);
    munmap(base, bytes);
    return 0;
}
