/* The floor for a feed that shows seconds (make bench, issue 17): sleep to each second
   boundary with clock_nanosleep and print it. One wake-up a second, nothing else. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

int main(void) {
    struct timespec next;
    clock_gettime(CLOCK_REALTIME, &next);
    next.tv_nsec = 0;
    for (;;) {
        next.tv_sec += 1;
        while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &next, NULL) == EINTR) {}
        printf("%ld\n", (long)next.tv_sec);
        fflush(stdout);
    }
}
