#!/usr/bin/env python3
"""A GNOME Pomodoro client as scripts in the wild write them, recording what it sees.

It drives org.gnome.Pomodoro on /org/gnome/Pomodoro of the session bus in
$DBUS_SESSION_BUS_ADDRESS with the command-line tools bar modules and shell scripts use:
methods called without arguments with `gdbus call`, `busctl call` and `dbus-send`;
properties read with `busctl get-property`, `gdbus call ... Properties.Get` and
`dbus-send ... Properties.Get`; StateChanged and PropertiesChanged followed with
`dbus-monitor`. It prints one JSON object per line, normalized so that two runs (against
the real GNOME Pomodoro and against Grow's gnome-pomodoro plugin) can be compared:

  {"step": NAME, "call": "ok" | ERROR-NAME, "props": {...}, "signals": [...]}

Each property is [type-letter, value]. Signals are those of the step, in order, each
["StateChanged", state, previous] or ["PropertiesChanged", changed, invalidated]; a
PropertiesChanged that only carries Elapsed is the once-a-second tick and is counted in
the step's "ticks" instead. Timestamps that are unix times of this run read "unix-time".

Used by Tests/GrowDaemonTests/GnomePomodoroDifferentialTests.swift; runs alone as well:
`python3 gnome-pomodoro-client.py` on a bus where either one owns the name.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time

NAME = "org.gnome.Pomodoro"
PATH = "/org/gnome/Pomodoro"
IFACE = "org.gnome.Pomodoro"
MARKER = "org.grow.Test.Marker"
DEADLINE = 20.0  # seconds to wait for anything the bus owes us

START = time.time()


def run(args):
    result = subprocess.run(args, capture_output=True, text=True, timeout=DEADLINE)
    return result.returncode, result.stdout, result.stderr


# --- dbus-monitor, parsed ------------------------------------------------------------------


class Monitor:
    """dbus-monitor on the service's signals and our markers, parsed into messages."""

    def __init__(self):
        self.messages = []  # (member, interface, [args])
        self.lock = threading.Condition()
        self.process = subprocess.Popen(
            [
                "stdbuf", "-oL", "dbus-monitor", "--session",
                f"type='signal',sender='{NAME}',path='{PATH}'",
                f"type='signal',interface='{MARKER}'",
            ],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        header = None
        lines = []
        for line in self.process.stdout:
            if not line.startswith(" ") and line.strip():
                self.finish(header, lines)
                header, lines = line, []
            else:
                lines.append(line)
        self.finish(header, lines)

    def finish(self, header, lines):
        if header is None or not header.startswith("signal "):
            return
        member = re.search(r"member=(\S+)", header).group(1)
        interface = re.search(r"interface=([^;\s]+)", header).group(1)
        tokens = tokenize("".join(lines))
        args = []
        try:
            while tokens:
                args.append(parse_value(tokens))
        except (ValueError, IndexError, AssertionError):
            args = ["unparsed"]  # not one of the messages compared (org.gtk.Actions, ...)
        with self.lock:
            self.messages.append((member, interface, args))
            self.lock.notify_all()

    def wait_for_marker(self, name, timeout=DEADLINE):
        """Waits until our marker `name` came through: everything the service sent before
        the marker was sent is then in `messages`. None if it did not come in time."""
        end = time.time() + timeout
        with self.lock:
            while True:
                for index, (member, _, args) in enumerate(self.messages):
                    if member == "Step" and args == [name]:
                        taken = self.messages[:index]
                        del self.messages[: index + 1]
                        return taken
                left = end - time.time()
                if left <= 0:
                    return None
                self.lock.wait(left)

    def stop(self):
        self.process.terminate()
        self.process.wait()


def tokenize(text):
    return re.findall(r'"(?:[^"\\]|\\.)*"|[\[\](){}]|[^\s\[\](){}]+', text)


def parse_value(tokens):
    """One value of dbus-monitor's output: `string "x"`, `double 1`, `boolean true`,
    `variant T V`, `array [ ... ]`, `dict entry( K V )`, `struct { ... }`."""
    kind = tokens.pop(0)
    if kind == "string" or kind == "object" or kind == "signature":
        if kind == "object":
            tokens.pop(0)  # "path"
        return tokens.pop(0)[1:-1]
    if kind == "double":
        return float(tokens.pop(0))
    if kind == "boolean":
        return tokens.pop(0) == "true"
    if kind in ("int32", "uint32", "int64", "uint64", "int16", "uint16", "byte"):
        return {"type": kind, "value": int(tokens.pop(0))}
    if kind == "variant":
        return parse_value(tokens)
    if kind == "array":
        assert tokens.pop(0) == "["
        items = []
        while tokens[0] != "]":
            items.append(parse_value(tokens))
        tokens.pop(0)
        if items and all(isinstance(item, tuple) for item in items):
            return dict(items)
        return items
    if kind == "struct":
        assert tokens.pop(0) == "{"
        items = []
        while tokens[0] != "}":
            items.append(parse_value(tokens))
        tokens.pop(0)
        return items
    if kind == "dict":
        assert tokens.pop(0) == "entry"
        assert tokens.pop(0) == "("
        key = parse_value(tokens)
        value = parse_value(tokens)
        assert tokens.pop(0) == ")"
        return (key, value)
    raise ValueError(f"cannot parse dbus-monitor output at {kind} {tokens[:5]}")


# --- normalizing ---------------------------------------------------------------------------


def normal(value):
    if isinstance(value, dict):
        return {key: normal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normal(item) for item in value]
    if isinstance(value, float) and START - 5 < value < time.time() + 5:
        return "unix-time"
    return value


def typed(value, key=None):
    """A value with the D-Bus type it came as: dbus-monitor's doubles, strings, booleans.
    A `timestamp` is a unix time of this run (dbus-monitor prints six digits of it)."""
    if key == "timestamp" and isinstance(value, float):
        return ["d", "unix-time" if abs(value - time.time()) < 3600 else value]
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, float):
        return ["d", normal(value)]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, dict) and "type" in value:
        return [value["type"], value["value"]]
    return ["?", normal(value)]


def signals_of(messages):
    signals, ticks = [], []
    for member, interface, args in messages:
        if member == "StateChanged" and interface == IFACE:
            signals.append(
                ["StateChanged"] + [{k: typed(v, k) for k, v in a.items()} for a in args])
        elif member == "PropertiesChanged" and args and args[0] == IFACE:
            changed = {k: typed(v) for k, v in args[1].items()}
            if list(changed) == ["Elapsed"] and not args[2]:
                ticks.append(changed["Elapsed"][1])
            else:
                signals.append(["PropertiesChanged", changed, args[2]])
        elif interface == IFACE or args[:1] == [IFACE]:
            signals.append([member, normal(args)])
    return signals, ticks


# --- reading properties, three ways ----------------------------------------------------------

BUSCTL_TYPES = {"s": "s", "d": "d", "b": "b"}


def busctl_get(prop):
    status, out, err = run(
        ["busctl", "--user", "get-property", NAME, PATH, IFACE, prop])
    if status != 0:
        return ["error", err.strip()]
    letter, _, text = out.strip().partition(" ")
    if letter == "s":
        return ["s", json.loads(text)]
    if letter == "d":
        return ["d", float(text)]
    if letter == "b":
        return ["b", text == "true"]
    return [letter, text]


def gdbus_get(prop):
    status, out, err = run(
        ["gdbus", "call", "--session", "--dest", NAME, "--object-path", PATH, "--method",
         "org.freedesktop.DBus.Properties.Get", IFACE, prop])
    if status != 0:
        return ["error", err.strip()]
    text = out.strip()[2:-3]  # "(<VALUE>,)"
    if text.startswith("'"):
        return ["s", text[1:-1]]
    if text in ("true", "false"):
        return ["b", text == "true"]
    try:
        return ["d" if "." in text or "e" in text else "?", float(text)]
    except ValueError:
        return ["?", text]


def dbus_send_get(prop):
    status, out, err = run(
        ["dbus-send", "--session", "--print-reply", f"--dest={NAME}", PATH,
         "org.freedesktop.DBus.Properties.Get", f"string:{IFACE}", f"string:{prop}"])
    if status != 0:
        return ["error", err.strip()]
    body = out.split("\n", 1)[1]
    return typed(parse_value(tokenize(body)))


def read_properties():
    # As a bar module does: State and IsPaused with busctl, the times with gdbus, the
    # duration with dbus-send.
    return {
        "State": busctl_get("State"),
        "IsPaused": busctl_get("IsPaused"),
        "Elapsed": gdbus_get("Elapsed"),
        "StateDuration": dbus_send_get("StateDuration"),
    }


# --- calling methods, three ways -------------------------------------------------------------

CALLERS = ["gdbus", "busctl", "dbus-send"]


def call(method, tool, arguments=()):
    if tool == "gdbus" or arguments:
        args = ["gdbus", "call", "--session", "--dest", NAME, "--object-path", PATH,
                "--method", f"{IFACE}.{method}", *arguments]
    elif tool == "busctl":
        args = ["busctl", "--user", "call", NAME, PATH, IFACE, method]
    else:
        args = ["dbus-send", "--session", "--print-reply", f"--dest={NAME}", PATH,
                f"{IFACE}.{method}"]
    status, out, err = run(args)
    if status == 0:
        return "ok"
    found = re.search(r"(org\.freedesktop\.DBus\.Error\.\w+|org\.gnome\.\w[\w.]*)", err)
    return found.group(1) if found else err.strip()


def mark(name):
    """Sends our marker `name`, and a second signal after it: dbus-monitor's output has no
    end-of-message line, so a message is known to be whole only when the next one begins."""
    for member in ("Step", "Flush"):
        run(["dbus-send", "--session", "--type=signal", "/org/grow/Test", f"{MARKER}.{member}",
             f"string:{name}"])


# --- the session -----------------------------------------------------------------------------

STEPS = [
    ("start", "Start"),
    ("start-again", "Start"),
    ("resume-running", "Resume"),
    ("pause", "Pause"),
    ("pause-again", "Pause"),
    ("resume", "Resume"),
    ("ticks", None),
    # A bar's scroll wheel: a minute more for the running pomodoro.
    ("longer", "SetStateDuration", "pomodoro", "1560.0"),
    ("skip-focus", "Skip"),
    ("skip-break", "Skip"),
    ("pause-focus", "Pause"),
    ("skip-paused", "Skip"),
    ("stop", "Stop"),
    ("stop-idle", "Stop"),
    ("pause-idle", "Pause"),
    ("resume-idle", "Resume"),
    ("skip-idle", "Skip"),
    ("start-after-stop", "Start"),
    ("reset", "Reset"),
    ("reset-idle", "Reset"),
]


def introspection():
    status, out, err = run(["busctl", "--user", "introspect", NAME, PATH, IFACE])
    if status != 0:
        return err.strip()
    members = []
    for line in out.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 3:
            # name, kind, signature, flags (not the value: that is the state's).
            members.append([fields[0], fields[1], fields[2], fields[-1]])
    return sorted(members)


def main():
    monitor = Monitor()
    # Wait until dbus-monitor listens: our own marker comes back.
    for attempt in range(400):
        mark(f"hello-{attempt}")
        if monitor.wait_for_marker(f"hello-{attempt}", timeout=0.05) is not None:
            break
    else:
        raise SystemExit("dbus-monitor never started")

    def emit(record):
        print(json.dumps(record, sort_keys=True), flush=True)

    emit({"step": "introspect", "members": introspection()})
    status, out, err = run(
        ["gdbus", "call", "--session", "--dest", NAME, "--object-path", PATH, "--method",
         "org.freedesktop.DBus.Properties.GetAll", IFACE])
    keys = sorted(re.findall(r"'(\w+)': <", out)) if status == 0 else err.strip()
    emit({"step": "getall", "keys": keys, "props": read_properties()})
    mark("initial")
    monitor.wait_for_marker("initial")  # whatever came before the first step

    for index, (step, method, *arguments) in enumerate(STEPS):
        record = {"step": step}
        if method is None:
            # Let a running phase count: wait for two once-a-second ticks of Elapsed.
            end = time.time() + DEADLINE
            seen = []
            while len(seen) < 2 and time.time() < end:
                mark(f"tick-{len(seen)}-{time.time()}")
                time.sleep(0.25)
                with monitor.lock:
                    for member, interface, args in monitor.messages:
                        if member == "PropertiesChanged" and args[:1] == [IFACE] \
                                and list(args[1]) == ["Elapsed"]:
                            if args[1]["Elapsed"] not in seen:
                                seen.append(args[1]["Elapsed"])
        else:
            record["call"] = call(method, CALLERS[index % len(CALLERS)], arguments)
        record["props"] = read_properties()
        mark(step)
        messages = monitor.wait_for_marker(step)
        if messages is None:
            raise SystemExit(f"the marker {step} never came through dbus-monitor")
        messages = [m for m in messages if m[1] != MARKER]
        record["signals"], ticks = signals_of(messages)
        record["ticks"] = len(ticks)
        emit(record)
    monitor.stop()


if __name__ == "__main__":
    main()
