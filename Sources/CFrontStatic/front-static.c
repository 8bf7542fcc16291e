// The `grow` front is linked fully static (Package.swift). Debian's libdbus-1.a calls these two
// libsystemd functions only to take listening sockets systemd passed to a D-Bus *server*, which
// the front never is; Debian ships no libsystemd.a, so these stand in: no sockets were passed.
#include "CFrontStatic.h"

int sd_listen_fds(int unset_environment) {
  (void)unset_environment;
  return 0;
}

int sd_is_socket(int fd, int family, int type, int listening) {
  (void)fd;
  (void)family;
  (void)type;
  (void)listening;
  return 0;
}

#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

int cfront_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int cfront_wall_timer(void) { return timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC); }

int cfront_wall_timer_arm(int timer, double seconds) {
  struct itimerspec when = {0};
  if (seconds > 0) {
    when.it_value.tv_sec = (time_t)seconds;
    when.it_value.tv_nsec = (long)((seconds - (double)when.it_value.tv_sec) * 1e9);
    // An instant in the past must still fire: 0 would disarm the timer.
    if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;
  }
  return timerfd_settime(timer, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &when, NULL);
}
