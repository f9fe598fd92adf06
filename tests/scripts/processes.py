# SPDX-License-Identifier: BSD-3-Clause
"""What the scripts' end tests look for in /proc: whether a process still runs, its children,
the processes that carry a test's mark among their arguments, and killing those left. (Each
test had its own copies.)"""
import os
import signal
import subprocess
from pathlib import Path


def running(pid):
    """Whether pid is a process that has not ended (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def children(pid):
    """pid's children, from every one of its threads."""
    try:
        return [int(x) for task in os.listdir(f"/proc/{pid}/task")
                for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except OSError:
        return []


def descendants(pid):
    found, todo = [], [pid]
    while todo:
        kids = children(todo.pop())
        found += kids
        todo += kids
    return found


def marked(mark, program=None):
    """The running processes with `mark` (str) as one of their arguments; with `program`
    (bytes), only those with an argument ending in it."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if mark.encode() in args and (program is None or any(a.endswith(program) for a in args)) and \
                running(entry.name):
            found.append(int(entry.name))
    return found


def kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def terminate(process, timeout):
    """SIGTERM to `process` (a Popen); its exit status, or, if it runs on past `timeout`
    seconds, a description of that (it is then killed)."""
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return f"still running {timeout} s later (killed: {process.wait()})"
