/* hydro2d: the explicit 2-D hydrodynamics of SPEC CFP95's 104.hydro2d, written from its
 * published description (Navier-Stokes/Euler equations of a gas on a rectangular grid,
 * advanced by finite differences; here a Lax-Friedrichs step of density, momenta and
 * energy with the pressure from the ideal gas law), with OpenMP loops over rows as a
 * parallelizing compiler makes them.  Nine NY x NX arrays of doubles (the paper's Table
 * 1: 8 MB; NX = 402, NY = 320: 9 MB) carved out of one block back to back, initialised
 * in parallel; the boundary rows and columns are copied serially between the steps.
 * usage: hydro2d [NX NY [STEPS]]; prints the total mass and energy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int nx = argc > 2 ? atoi(argv[1]) : 402, ny = argc > 2 ? atoi(argv[2]) : 320;
    int steps = argc > 3 ? atoi(argv[3]) : 10;
    if (nx < 8 || ny < 8 || steps < 1) {
        fprintf(stderr, "usage: hydro2d [NX >= 8 NY >= 8 [STEPS >= 1]]\n");
        return 2;
    }
    size_t plane = (size_t)nx * (size_t)ny;
    double *pool = malloc(9 * plane * sizeof *pool);
    if (!pool) {
        fprintf(stderr, "hydro2d: out of memory\n");
        return 1;
    }
    double (*ro)[nx] = (double (*)[nx])(pool + 0 * plane), (*mx)[nx] = (double (*)[nx])(pool + 1 * plane);
    double (*my)[nx] = (double (*)[nx])(pool + 2 * plane), (*en)[nx] = (double (*)[nx])(pool + 3 * plane);
    double (*pr)[nx] = (double (*)[nx])(pool + 4 * plane), (*ro1)[nx] = (double (*)[nx])(pool + 5 * plane);
    double (*mx1)[nx] = (double (*)[nx])(pool + 6 * plane), (*my1)[nx] = (double (*)[nx])(pool + 7 * plane);
    double (*en1)[nx] = (double (*)[nx])(pool + 8 * plane);
    const double gamma = 1.4, dt = 0.1, h = 1.0;

    #pragma omp parallel for
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            double jet = (j > ny / 3 && j < 2 * ny / 3 && i < nx / 8) ? 1.0 : 0.0;
            ro[j][i] = 1.0 + 0.1 * jet;
            mx[j][i] = 0.5 * jet;
            my[j][i] = 0;
            en[j][i] = 2.5 + 0.25 * jet;
            pr[j][i] = ro1[j][i] = mx1[j][i] = my1[j][i] = en1[j][i] = 0;
        }
    for (int s = 0; s < steps; s++) {
        /* pressure of an ideal gas */
        #pragma omp parallel for
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                double kin = 0.5 * (mx[j][i] * mx[j][i] + my[j][i] * my[j][i]) / ro[j][i];
                pr[j][i] = (gamma - 1) * (en[j][i] - kin);
            }
        /* Lax-Friedrichs: the neighbours' mean less the centred flux differences */
        #pragma omp parallel for
        for (int j = 1; j < ny - 1; j++)
            for (int i = 1; i < nx - 1; i++) {
                double u = mx[j][i + 1] / ro[j][i + 1], w = mx[j][i - 1] / ro[j][i - 1];
                double v = my[j + 1][i] / ro[j + 1][i], z = my[j - 1][i] / ro[j - 1][i];
                ro1[j][i] = 0.25 * (ro[j][i + 1] + ro[j][i - 1] + ro[j + 1][i] + ro[j - 1][i]) -
                            dt / (2 * h) * (mx[j][i + 1] - mx[j][i - 1] + my[j + 1][i] - my[j - 1][i]);
                mx1[j][i] = 0.25 * (mx[j][i + 1] + mx[j][i - 1] + mx[j + 1][i] + mx[j - 1][i]) -
                            dt / (2 * h) * (mx[j][i + 1] * u + pr[j][i + 1] - mx[j][i - 1] * w - pr[j][i - 1] +
                                            mx[j + 1][i] * v - mx[j - 1][i] * z);
                my1[j][i] = 0.25 * (my[j][i + 1] + my[j][i - 1] + my[j + 1][i] + my[j - 1][i]) -
                            dt / (2 * h) * (my[j][i + 1] * u - my[j][i - 1] * w + my[j + 1][i] * v +
                                            pr[j + 1][i] - my[j - 1][i] * z - pr[j - 1][i]);
                en1[j][i] = 0.25 * (en[j][i + 1] + en[j][i - 1] + en[j + 1][i] + en[j - 1][i]) -
                           dt / (2 * h) * ((en[j][i + 1] + pr[j][i + 1]) * u - (en[j][i - 1] + pr[j][i - 1]) * w +
                                           (en[j + 1][i] + pr[j + 1][i]) * v - (en[j - 1][i] + pr[j - 1][i]) * z);
            }
        #pragma omp parallel for
        for (int j = 1; j < ny - 1; j++)
            for (int i = 1; i < nx - 1; i++) {
                ro[j][i] = fmax(ro1[j][i], 1e-6);
                mx[j][i] = mx1[j][i];
                my[j][i] = my1[j][i];
                en[j][i] = en1[j][i];
            }
        for (int i = 0; i < nx; i++) { /* walls: copies of the rows inside */
            ro[0][i] = ro[1][i], mx[0][i] = mx[1][i], my[0][i] = -my[1][i], en[0][i] = en[1][i];
            ro[ny - 1][i] = ro[ny - 2][i], mx[ny - 1][i] = mx[ny - 2][i];
            my[ny - 1][i] = -my[ny - 2][i], en[ny - 1][i] = en[ny - 2][i];
        }
        for (int j = 0; j < ny; j++) { /* inflow on the left, outflow on the right */
            ro[j][0] = ro[j][1], mx[j][0] = mx[j][1], my[j][0] = my[j][1], en[j][0] = en[j][1];
            ro[j][nx - 1] = ro[j][nx - 2], mx[j][nx - 1] = mx[j][nx - 2];
            my[j][nx - 1] = my[j][nx - 2], en[j][nx - 1] = en[j][nx - 2];
        }
    }
    double mass = 0, energy = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            mass += ro[j][i];
            energy += en[j][i];
        }
    printf("mass %.10e\nenergy %.10e\n", mass, energy);
    free(pool);
    return 0;
}
