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
