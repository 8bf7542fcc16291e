#!/usr/bin/env python3
"""Grow plugin: appends one line per completed focus phase to a log file.

Each line is tab-separated: the time the phase ended (ISO 8601, UTC), the card, and the
minutes of focus, e.g.

    2025-03-01T10:15:00.000Z	math	50.00

Enable it in ~/.config/grow/config.ini (the log file is optional; the default is
$XDG_STATE_HOME/grow/completed.log, i.e. ~/.local/state/grow/completed.log):

    [plugin.log-completed]
    exec = ~/src/grow/examples/plugins/log-completed.py ~/focus.log

Grow starts it, writes every event to its stdin as one JSON object per line (protocol v1,
docs/plugin-protocol.md) and stops it with SIGTERM. Python 3 standard library only.
"""

import json
import os
import signal
import sys


def default_log_path():
    state_home = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(state_home, "grow", "completed.log")


def record(path, event):
    phase = event["phase"]
    minutes = float(event["elapsed"]) / 60
    line = "%s\t%s\t%.2f\n" % (event["ended_at"], phase["card"], minutes)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # Opened per line, so the file can be rotated or deleted while Grow runs.
    with open(path, "a", encoding="utf-8") as log:
        log.write(line)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else default_log_path()
    # SIGTERM from Grow means "exit now"; leave without a traceback.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        line = sys.stdin.readline()
        if not line:  # EOF: the daemon is gone
            return
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("v") != 1 or event.get("type") != "phase-ended":
            continue
        if event.get("outcome") == "completed" and event["phase"]["kind"] == "focus":
            try:
                record(path, event)
            except OSError as error:
                # stderr lines end up in the daemon's log as grow[ID] ...
                print("cannot write %s: %s" % (path, error), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
