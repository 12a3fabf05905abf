/* trap: UTF-8 identifiers (δ, données) in arrays, indices and bounds: the text must reach cc byte for byte */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  long ñ = 300000;
  double *données = malloc((size_t)ñ * sizeof *données);
  long *δ = malloc((size_t)ñ * sizeof *δ);
  for (long ί = 0; ί < ñ; ί++) { données[ί] = (double)(ί % 101); δ[ί] = (ί * 31) % ñ; }
  double π = 0;
  for (long ί = 0; ί < ñ; ί++) π += données[δ[ί]] * 0.5;
  for (long ί = ñ - 1; ί >= 0; ί--) π -= données[ί] / 3;
  printf("%s %.3f\n", __FILE__, π);
  free(données); free(δ);
  return 0;
}
