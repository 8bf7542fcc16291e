// What the fully static `grow` front (Sources/grow) needs besides libdbus-1.a: see
// front-static.c.
int sd_listen_fds(int unset_environment);
int sd_is_socket(int fd, int family, int type, int listening);

// `grow status --follow` in the front: pidfd_open(2) (a descriptor readable once the process
// exits; glibc 2.36 has no wrapper, and `syscall` is variadic, which Swift cannot call), and
// timerfd(2) on CLOCK_REALTIME, armed at an absolute instant and cancelled by a clock jump.
int cfront_pidfd_open(int pid);
int cfront_wall_timer(void);
// Arms `timer` at `seconds` since 1970 (0: disarms it); -1 with errno on failure.
int cfront_wall_timer_arm(int timer, double seconds);
