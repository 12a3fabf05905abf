/* A thread joins the main thread, which ends with pthread_exit: the kernel wakes one
   waiter of the main thread's tid word, and the library's exit watcher waits there too. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_t main_t;
static void *joiner(void *a) {
    (void)a;
    int rc = pthread_join(main_t, NULL);
    printf("joined main: %d\n", rc);
    fflush(stdout);
    return NULL;
}
int main(void) {
    main_t = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, joiner, NULL);
    usleep(200000); /* joiner waits on main's tid */
    pthread_exit(NULL);
}
