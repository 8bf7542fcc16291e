/* Linux calls that Swift's Glibc module leaves out. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* pidfd_open(2): a descriptor that becomes readable when the process exits. glibc 2.36 has
   a wrapper, but not in a header Swift imports; the system call is the same everywhere. */
static inline int clinux_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

/* fork and exec for the daemon's plugin programs. Like posix_spawn with its own process group,
   an empty signal mask, `default_signals` back at SIG_DFL and the three standard descriptors,
   plus what posix_spawn cannot do: the child is sent `death_signal` when the thread that
   started it ends, so a plugin program does not outlive a daemon killed with SIGKILL; and the
   program run is the open file `program_fd` (execveat with AT_EMPTY_PATH), the one the caller
   checked, not whatever its path leads to by then. Between fork and exec the child calls only
   async-signal-safe functions. `child_umask` < 0 keeps the parent's. Returns the pid, or
   -errno when the program could not be started: the exec's errno comes back through a
   close-on-exec pipe. */
static inline int clinux_spawn(int program_fd, char *const argv[], char *const envp[],
                               int in_fd, int out_fd, int err_fd, int child_umask,
                               const int *default_signals, int signal_count, int death_signal) {
    int report[2];
    if (pipe(report) != 0) return -errno;
    fcntl(report[0], F_SETFD, FD_CLOEXEC);
    fcntl(report[1], F_SETFD, FD_CLOEXEC);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(report[0]);
        close(report[1]);
        return -error;
    }
    if (pid == 0) {
        close(report[0]);
        setpgid(0, 0);
        /* The parent may already have gone between fork and prctl: then nobody would ask. */
        if (death_signal > 0 && (prctl(PR_SET_PDEATHSIG, death_signal) != 0 || getppid() != parent))
            _exit(127);
        struct sigaction fallback;
        memset(&fallback, 0, sizeof fallback);
        fallback.sa_handler = SIG_DFL;
        for (int i = 0; i < signal_count; i++) sigaction(default_signals[i], &fallback, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* Out of the way of the standard descriptors, and kept open across exec: the kernel
           hands a script's interpreter /dev/fd/N to read, which must still be there. */
        if (program_fd < 3) program_fd = fcntl(program_fd, F_DUPFD, 3);
        if (program_fd >= 0 && fcntl(program_fd, F_SETFD, 0) == 0 && dup2(in_fd, 0) >= 0
            && dup2(out_fd, 1) >= 0 && dup2(err_fd, 2) >= 0) {
            if (child_umask >= 0) umask((mode_t)child_umask);
            syscall(SYS_execveat, program_fd, "", argv, envp, AT_EMPTY_PATH);
        }
        int error = errno;
        if (write(report[1], &error, sizeof error) < 0) { /* nothing left to tell */ }
        _exit(127);
    }
    close(report[1]);
    int error = 0;
    ssize_t count;
    do {
        count = read(report[0], &error, sizeof error);
    } while (count < 0 && errno == EINTR);
    close(report[0]);
    if (count == (ssize_t)sizeof error) {
        waitpid(pid, NULL, 0);
        return -error;
    }
    return pid;
}

/* libdispatch's hooks for a loop that serves the main queue on the main thread itself, as
   CoreFoundation's run loop does (MainLoop.runOnMainThread): a descriptor (an eventfd on
   Linux) that becomes readable when the main queue has work, and the call that runs it.
   Exported by libdispatch, declared only in its private headers. */
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);
