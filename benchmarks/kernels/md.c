/* A short-range molecular-dynamics step loop on a long channel of particles: the particle
 * data are a struct of arrays (positions, velocities, forces, cell numbers, each array
 * malloc'd; paged to swap when larger than memory), updated in passes per time step:
 * velocity-Verlet kick and drift, binning into cells along the channel (a helper called
 * per particle), a counting sort of the particles by cell, and pair forces between
 * neighbours gathered through the cell order.  usage: md run - BYTES */
#include "common.h"

#define NSTEPS 1
#define SPACING 0.125    /* mean distance between particles along the channel */
#define RCUT 1.0         /* interaction range, also the cell width */
#define STIFF 10.0

struct particles {
    int n;
    double *x, *y, *z;
    double *vx, *vy, *vz;
    double *fx, *fy, *fz;
    int *cell;
};

/* The channel: [0, box_len) along x, [0, 1) across. */
double box_len;
int ncell;
int *cell_count, *cell_start, *order;

static int alloc_particles(struct particles *p, int n)
{
    p->n = n;
    p->x = malloc(n * sizeof(double));
    p->y = malloc(n * sizeof(double));
    p->z = malloc(n * sizeof(double));
    p->vx = malloc(n * sizeof(double));
    p->vy = malloc(n * sizeof(double));
    p->vz = malloc(n * sizeof(double));
    p->fx = calloc(n, sizeof(double));
    p->fy = calloc(n, sizeof(double));
    p->fz = calloc(n, sizeof(double));
    p->cell = malloc(n * sizeof(int));
    return p->x && p->y && p->z && p->vx && p->vy && p->vz && p->fx && p->fy && p->fz &&
           p->cell;
}

static void free_particles(struct particles *p)
{
    free(p->x); free(p->y); free(p->z);
    free(p->vx); free(p->vy); free(p->vz);
    free(p->fx); free(p->fy); free(p->fz);
    free(p->cell);
}

static int cell_of(double x)
{
    int c = (int)(x / RCUT);
    if (c < 0)
        c = 0;
    if (c >= ncell)
        c = ncell - 1;
    return c;
}

/* v += f dt/2 */
static void kick(struct particles *p, double dt)
{
    int i;
    for (i = 0; i < p->n; i++) {
        p->vx[i] += 0.5 * dt * p->fx[i];
        p->vy[i] += 0.5 * dt * p->fy[i];
        p->vz[i] += 0.5 * dt * p->fz[i];
    }
}

/* x += v dt, reflecting at the channel's walls */
static void drift(struct particles *p, double dt)
{
    int i;
    for (i = 0; i < p->n; i++) {
        p->x[i] += dt * p->vx[i];
        p->y[i] += dt * p->vy[i];
        p->z[i] += dt * p->vz[i];
        if (p->x[i] < 0.0) { p->x[i] = -p->x[i]; p->vx[i] = -p->vx[i]; }
        if (p->x[i] >= box_len) { p->x[i] = 2.0 * box_len - p->x[i]; p->vx[i] = -p->vx[i]; }
        if (p->y[i] < 0.0) { p->y[i] = -p->y[i]; p->vy[i] = -p->vy[i]; }
        if (p->y[i] >= 1.0) { p->y[i] = 2.0 - p->y[i]; p->vy[i] = -p->vy[i]; }
        if (p->z[i] < 0.0) { p->z[i] = -p->z[i]; p->vz[i] = -p->vz[i]; }
        if (p->z[i] >= 1.0) { p->z[i] = 2.0 - p->z[i]; p->vz[i] = -p->vz[i]; }
    }
}

/* cell numbers, then order[] = the particles sorted by cell (counting sort) */
static void sort_into_cells(struct particles *p)
{
    int i, c;
    for (i = 0; i < p->n; i++)
        p->cell[i] = cell_of(p->x[i]);
    for (c = 0; c <= ncell; c++)
        cell_count[c] = 0;
    for (i = 0; i < p->n; i++)
        cell_count[p->cell[i]]++;
    cell_start[0] = 0;
    for (c = 0; c < ncell; c++)
        cell_start[c + 1] = cell_start[c] + cell_count[c];
    for (c = 0; c < ncell; c++)
        cell_count[c] = cell_start[c];
    for (i = 0; i < p->n; i++)
        order[cell_count[p->cell[i]]++] = i;
}

/* pair forces: each particle with the later ones of its own cell and those of the next */
static void forces(struct particles *p)
{
    int a, b, c, i, j;
    for (i = 0; i < p->n; i++) {
        p->fx[i] = 0.0;
        p->fy[i] = 0.0;
        p->fz[i] = 0.0;
    }
    for (c = 0; c < ncell; c++) {
        int end = c + 2 <= ncell ? cell_start[c + 2] : cell_start[ncell];
        for (a = cell_start[c]; a < cell_start[c + 1]; a++) {
            i = order[a];
            for (b = a + 1; b < end; b++) {
                j = order[b];
                double dx = p->x[i] - p->x[j];
                double dy = p->y[i] - p->y[j];
                double dz = p->z[i] - p->z[j];
                double r2 = dx * dx + dy * dy + dz * dz;
                if (r2 < RCUT * RCUT) {
                    double f = STIFF * (RCUT * RCUT - r2);
                    p->fx[i] += f * dx; p->fy[i] += f * dy; p->fz[i] += f * dz;
                    p->fx[j] -= f * dx; p->fy[j] -= f * dy; p->fz[j] -= f * dz;
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: md run - BYTES\n"); return 2; }
    if (strcmp(argv[1], "create") == 0) return 0;
    size_t bytes = arg_size(argv[3]);
    /* 9 doubles and 2 ints (cell, order) a particle */
    int n = (int)(bytes / (9 * sizeof(double) + 2 * sizeof(int)));
    struct particles p;
    int i, t;
    double dt = 0.01;
    if (n < 16) { fprintf(stderr, "md: BYTES too small\n"); return 2; }
    box_len = n * SPACING;
    ncell = (int)(box_len / RCUT);
    order = malloc(n * sizeof(int));
    cell_count = malloc((ncell + 1) * sizeof(int));
    cell_start = malloc((ncell + 1) * sizeof(int));
    if (!alloc_particles(&p, n) || !order || !cell_count || !cell_start) {
        fprintf(stderr, "md: out of memory\n");
        return 2;
    }
    /* along the channel in index order, jittered; small random velocities */
    unsigned int seed = 12345;
    for (i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p.x[i] = (i + 0.5) * SPACING + ((int)((seed >> 16) % 1000) - 500) * 1e-4;
        p.y[i] = ((seed >> 8) % 1000) * 1e-3;
        seed = seed * 1103515245u + 12345u;
        p.z[i] = ((seed >> 16) % 1000) * 1e-3;
        p.vx[i] = ((int)(seed % 201) - 100) * 1e-3;
        p.vy[i] = ((int)((seed >> 4) % 201) - 100) * 1e-3;
        p.vz[i] = ((int)((seed >> 12) % 201) - 100) * 1e-3;
    }
    double t0 = now();
    sort_into_cells(&p);
    forces(&p);
    for (t = 0; t < NSTEPS; t++) {
        kick(&p, dt);
        drift(&p, dt);
        sort_into_cells(&p);
        forces(&p);
        kick(&p, dt);
    }
    double t1 = now();
    double ekin = 0, px = 0, xsum = 0;
    for (i = 0; i < n; i++) {
        ekin += 0.5 * (p.vx[i] * p.vx[i] + p.vy[i] * p.vy[i] + p.vz[i] * p.vz[i]);
        px += p.vx[i];
        xsum += p.x[i];
    }
    printf("checksum ekin %.6e px %.6e xsum %.6e\naccess_seconds %.3f\n", ekin, px, xsum,
           t1 - t0);
    free_particles(&p);
    free(order);
    free(cell_count);
    free(cell_start);
    return 0;
}
