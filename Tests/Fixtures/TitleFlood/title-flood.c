/* title-flood: a hostile X client for the soak (Tools/GrowSoak/StressFaults.swift).
 *
 * Maps a window of class "soakflood", prints its id, waits for a line on stdin, then
 * retitles the window as fast as the X server takes it (XStoreName, XSync every 50) until
 * stdin closes, SIGTERM, or it has set MAX titles; prints how many it set. Every other title
 * matches the soak's distraction pattern, so the x11 plugin's rules flip with each one. The
 * cap keeps the window manager, which follows every title too, from falling minutes behind.
 *
 *   cc -O2 -o title-flood title-flood.c -lX11 && ./title-flood [MAX]
 */
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stopping = 0;
static void stop(int signal_number) { (void)signal_number; stopping = 1; }

int main(int argc, char **argv) {
  unsigned long most = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
  Display *display = XOpenDisplay(NULL);
  if (display == NULL) {
    fprintf(stderr, "title-flood: cannot open the display\n");
    return 1;
  }
  Window window = XCreateSimpleWindow(display, DefaultRootWindow(display), 0, 0, 400, 200, 0,
                                      0, 0);
  XClassHint hint = {"soakflood", "soakflood"};
  XSetClassHint(display, window, &hint);
  XStoreName(display, window, "soak flood: ready");
  XSelectInput(display, window, StructureNotifyMask);
  XMapWindow(display, window);
  for (XEvent event;;) {
    XNextEvent(display, &event);
    if (event.type == MapNotify) break;
  }
  printf("%lu\n", (unsigned long)window);
  fflush(stdout);

  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) return 0;
  signal(SIGTERM, stop);
  /* stdin closing also ends the flood; poll it without blocking. */
  fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
  unsigned long count = 0;
  char title[128];
  while (!stopping && count < most) {
    snprintf(title, sizeof title, "%s %lu - flooding the title", count % 2 ? "youtube" : "notes",
             count);
    XStoreName(display, window, title);
    if (++count % 50 == 0) {
      XSync(display, False);
      char byte;
      if (read(STDIN_FILENO, &byte, 1) == 0) break;
    }
  }
  XSync(display, False);
  printf("%lu\n", count);
  fflush(stdout);
  XCloseDisplay(display);
  return 0;
}
