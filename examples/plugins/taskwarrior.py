#!/usr/bin/env python3
"""Grow plugin: a card's pending Taskwarrior tasks as Grow tasks, done in both.

Enable it in ~/.config/grow/config.ini with the card and a Taskwarrior filter:

    [plugin.taskwarrior]
    exec = ~/src/grow/examples/plugins/taskwarrior.py math project:school

When the daemon starts it, and after every completed focus, the pending tasks that match the
filter (`task FILTER status:pending export`) are added to the card's task list in Grow
(org.grow.Grow1.Journey.AddTask), once each, so `grow tasks math` and `grow start --task`
offer them. When a task is marked done in Grow (the "Done?" notification's button, `grow
task done`, or Journey.TaskDone), `task UUID done` marks it done in Taskwarrior too.

Which Grow task is which Taskwarrior task is kept in $XDG_STATE_HOME/grow/taskwarrior.json.
Taskwarrior's own settings apply (TASKRC, TASKDATA). Protocol: docs/plugin-protocol.md;
Python 3 standard library, `task` (Debian: taskwarrior) and `gdbus` (libglib2.0-bin).
"""

import json
import os
import re
import signal
import subprocess
import sys

JOURNEY = "org.grow.Grow1.Journey"


def state_path():
    state_home = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(state_home, "grow", "taskwarrior.json")


def load_links():
    """Grow task id (as a string) -> Taskwarrior uuid."""
    try:
        with open(state_path(), encoding="utf-8") as file:
            links = json.load(file)
        return links if isinstance(links, dict) else {}
    except (OSError, ValueError):
        return {}


def save_links(links):
    path = state_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(links, file)
    os.replace(temporary, path)


def say(message):
    """A line in the daemon's log (stderr becomes grow[taskwarrior] ...)."""
    print(message, file=sys.stderr, flush=True)


def run(arguments):
    # Bounded: a stuck `task` (a lock, a hook waiting for input) never holds the plugin.
    return subprocess.run(
        arguments, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)


def pending_tasks(task_filter):
    result = run(["task", "rc.confirmation=off", "rc.hooks=off"] + task_filter
                 + ["status:pending", "export"])
    if result.returncode != 0:
        say("task export failed: %s" % result.stderr.strip())
        return []
    try:
        return json.loads(result.stdout or "[]")
    except ValueError:
        say("task export gave no JSON")
        return []


def add_to_grow(card, description):
    result = run(["gdbus", "call", "--session", "--dest", "org.grow.Grow1",
                  "--object-path", "/org/grow/Grow1", "--method", JOURNEY + ".AddTask",
                  card, description])
    match = re.search(r"int64 (\d+)", result.stdout)
    if result.returncode != 0 or not match:
        say("cannot add '%s' to Grow: %s" % (description, result.stderr.strip()))
        return None
    return match.group(1)


def sync(card, task_filter, links):
    linked = set(links.values())
    added = 0
    for task in pending_tasks(task_filter):
        uuid = task.get("uuid")
        description = " ".join(str(task.get("description", "")).split())[:200]
        if not uuid or uuid in linked or not description:
            continue
        grow_id = add_to_grow(card, description)
        if grow_id is None:
            continue
        links[grow_id] = uuid
        linked.add(uuid)
        added += 1
    if added:
        save_links(links)
        say("added %d Taskwarrior task(s) to the card '%s'" % (added, card))


def mark_done(grow_id, links):
    uuid = links.get(str(grow_id))
    if uuid is None:
        return
    result = run(["task", "rc.confirmation=off", "rc.hooks=off", uuid, "done"])
    if result.returncode != 0:
        say("task %s done failed: %s" % (uuid, result.stderr.strip()))
        return
    del links[str(grow_id)]
    save_links(links)
    say("marked Taskwarrior task %s done" % uuid)


def main():
    if len(sys.argv) < 2:
        say("usage: taskwarrior.py CARD [FILTER...]; see the comment at its top")
        return 2
    card, task_filter = sys.argv[1], sys.argv[2:]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    links = load_links()
    while True:
        line = sys.stdin.readline()
        if not line:  # EOF: the daemon is gone
            return 0
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("v") != 1:
            continue
        kind = event.get("type")
        try:
            if kind == "hello":
                sync(card, task_filter, links)
            elif kind == "phase-ended" and event.get("outcome") == "completed":
                sync(card, task_filter, links)
            elif kind == "task-done":
                mark_done(event.get("task"), links)
        except (OSError, subprocess.SubprocessError) as error:
            say("%s: %s" % (kind, error))


if __name__ == "__main__":
    sys.exit(main())
