// What the fully static `grow` front (Sources/grow) needs besides libdbus-1.a: see
// front-static.c.
int sd_listen_fds(int unset_environment);
int sd_is_socket(int fd, int family, int type, int listening);
