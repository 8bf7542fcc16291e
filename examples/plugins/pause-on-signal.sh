#!/bin/sh
# Grow plugin: pauses the timer on SIGUSR1 and resumes it on SIGUSR2, so any program (a
# screen locker hook, a phone-call script, a key binding) can do it with `kill`.
#
# Enable it in ~/.config/grow/config.ini (the pid file is optional; the default is
# $XDG_RUNTIME_DIR/grow-pause-on-signal.pid):
#
#   [plugin.pause-on-signal]
#   exec = ~/src/grow/examples/plugins/pause-on-signal.sh
#
# then:  kill -USR1 "$(cat "$XDG_RUNTIME_DIR/grow-pause-on-signal.pid")"
#
# Protocol (docs/plugin-protocol.md): Grow writes one JSON event per line to our stdin and
# reads commands, one JSON object per line, from our stdout.
#
# Why the loop looks like this: a shell runs a trap only between commands, so a trap set
# while the shell sits in a blocking `read` would wait for the next event line, which may
# be an hour away. `wait`, however, is interrupted by a trapped signal (POSIX: it returns
# at once with a status above 128 and the trap runs). So the events are read by a child
# subshell and the main shell only ever waits for that child: signals are handled the moment
# they arrive, and when stdin ends (Grow is gone) the child exits and so do we. Nothing
# polls.

set -u

pid_file=${1:-${XDG_RUNTIME_DIR:-/tmp}/grow-pause-on-signal.pid}
echo $$ >"$pid_file"

send() { printf '{"command":"%s"}\n' "$1"; }

# Copy stdin to fd 3: without job control, a background job's own stdin is /dev/null.
exec 3<&0
(
  # The subshell would die of SIGUSR1 sent to the whole process group; only we handle it.
  trap '' USR1 USR2
  # The events and the replies to our commands; this plugin needs none of them.
  while IFS= read -r _ <&3; do :; done
) &
reader=$!
exec 3<&-

trap 'send pause' USR1
trap 'send resume' USR2
trap 'kill "$reader" 2>/dev/null; rm -f "$pid_file"; exit 0' TERM INT

# wait returns after each handled signal; wait again until the reader has really ended.
while kill -0 "$reader" 2>/dev/null; do
  wait "$reader"
done
rm -f "$pid_file"
