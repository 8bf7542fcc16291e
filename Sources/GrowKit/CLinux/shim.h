/* Linux calls that Swift's Glibc module leaves out. */
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* pidfd_open(2): a descriptor that becomes readable when the process exits. glibc 2.36 has
   a wrapper, but not in a header Swift imports; the system call is the same everywhere. */
static inline int clinux_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
