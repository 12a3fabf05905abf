/* A forked child runs hinted loops (its library threads start) and ends with the raw
   exit system call: it must end with that status, and its parent's waitpid return. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/syscall.h>
static double a[1<<20];
int main(void){
  pid_t p = fork();
  if (p == 0) {
    double s=0; for(int r=0;r<4;r++) for (long i=0;i<(1<<20);i++){ a[i]+=i; s+=a[i]; }
    printf("child sum %.0f\n", s); fflush(stdout);
    syscall(SYS_exit, 9);
  }
  int st; waitpid(p,&st,0);
  printf("child status %d exited=%d code=%d\n", st, WIFEXITED(st), WEXITSTATUS(st));
  return 0;
}
