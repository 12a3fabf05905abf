/* trap: nests run in two versions (hinted, and the user's text copied between #line directives): a body that is an if with no else, a nest ending mid-line, __LINE__ in and after it, tabs before it, a "#" in a string */
#include <stdio.h>
#include <stdlib.h>

#define N 400000

int main(void) {
  double *a = malloc(N * sizeof *a);
  long odd = 0, lines = 0;
  double s = 0;
  for (int i = 0; i < N; i++) a[i] = (i * 13) % 7;
  for (int i = 0; i < N; i++)
    if (a[i] > 3)
      odd++;
  for (int i = 0; i < N; i++) s += a[i]; lines += __LINE__;
	for (int i = 0; i < N; i += 2) {	/* a tab before the loop */
	  s -= a[i] / 2;
	  if (i == 4) lines += __LINE__;
	}
  for (int i = 0; i < N; i++) if (a[i] == 1) s += 0.5; else lines += i == 7;
  printf("# %ld %ld %.1f line %d\n", odd, lines, s, __LINE__);
  free(a);
  return 0;
}
