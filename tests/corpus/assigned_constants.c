/* trap: a local assigned a constant inside the nest stands for that constant only where
   every path passes the assignment: before an inner loop (NPB SP's `i = 1; for (m ...)
   rhs[k][j][i][m]`), a constant that does not fit the variable's type, the assignment
   inside a switch (a case may enter past it), under an if, after the use in the same
   block (the first iteration sees the value from before the nest), and two assignments
   of different constants. */
#include <stdio.h>
#include <stdlib.h>

#define N 48
static double rhs[N][N][N][5];

static double sp_like(void)
{
  int i, j, k, m;
  double s = 0;
  for (k = 0; k < N; k++)
    for (j = 0; j < N; j++) {
      i = 1;
      for (m = 0; m < 5; m++)
        s += rhs[k][j][i][m];
    }
  return s;
}

static double narrow(void)
{
  unsigned char c;
  double s = 0;
  for (int k = 0; k < N; k++) {
    c = 258;   /* 2 */
    for (int m = 0; m < 5; m++)
      s += rhs[k][c][c][m];
  }
  return s;
}

static double tricky(int i)
{
  double s = 0;
  for (int k = 0; k < N; k++) {
    switch (k % 3) {
    case 0:
      i = 3;
      /* fall through */
    default:
      s += rhs[k][i][0][0];
    }
  }
  for (int k = 0; k < N; k++) {
    if (k > 2)
      i = 7;
    s += rhs[k][i][1][1];
  }
  for (int k = 0; k < N; k++) {
    s += rhs[k][i][2][2];
    i = 5;
  }
  for (int k = 0; k < N; k++) {
    i = k % 2 ? 4 : 6;
    for (int m = 0; m < 5; m++)
      s += rhs[k][i][3][m];
    i = 9;
    for (int m = 0; m < 5; m++)
      s += rhs[k][i][4][m];
  }
  return s;
}

int main(void)
{
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        for (int m = 0; m < 5; m++)
          rhs[k][j][i][m] = (k * 7 + j * 3 + i + m) % 11;
  printf("%.1f %.1f %.1f\n", sp_like(), narrow(), tricky(8));
  return 0;
}
