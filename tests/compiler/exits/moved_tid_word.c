/* The main thread moves its clear_child_tid word (set_tid_address), then ends with the
   raw exit system call: the exit watcher must not wait on the old word for good. */
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
static int myword;
int main(void){
  syscall(SYS_set_tid_address, &myword);
  printf("main leaving\n"); fflush(stdout);
  syscall(SYS_exit, 3);
}
