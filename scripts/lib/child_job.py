# SPDX-License-Identifier: BSD-3-Clause
"""child_job: runs a child command (squallrun, mpirun, scripts/build: programs that start more
processes) in a process group of its own, and stops that group whole when the script running it
is stopped by SIGINT, SIGTERM or SIGHUP, or when the child outlives its timeout.

The scripts that start jobs (scripts/compare, scripts/bench, the drivers in bench/) use it so:

    sys.path.insert(0, str(ROOT / "scripts" / "lib"))
    import child_job

    def run(command):
        process = child_job.start(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err, timed_out = child_job.finish(process, timeout=600)
        ...

    if __name__ == "__main__":
        child_job.run_main(main, "NAME")  # a stop signal: the job stopped, cleanups, 128 + the signal

Without it, SIGTERM to such a script alone (a `kill`, a CI timeout) ended the script and left
its job running; a terminal's Ctrl-C reached the job's processes directly, each in its own way.
Now the child runs in a session of its own (its process group's id is its pid), and a stopping
signal reaches the script only, which passes it to the whole group, waits GRACE_S seconds for
the group's leader, then kills what is left of the group.

One child at a time: the module records the child running now (start() records it, finish()
forgets it), and that is the one a stopping signal ends. Plain standard library; Python 3.11.
"""
import contextlib
import json
import os
import signal
import subprocess
import sys

# The signals that stop a script and its job: a terminal's Ctrl-C, `kill`, a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How long a stopped job may take to end before it is killed (squallrun passes the signal to its
# nodes and waits for them; mpirun to its ranks).
GRACE_S = 60

# The child running now, and whether it has a process group of its own (when it has, the group's
# id is its pid).
_CHILD = {"process": None, "own_group": False}
# What stopped() does after the job has ended (remove partial files...), in order.
_CLEANUPS = []


class Stopped(BaseException):
    """Raised by a stopping signal's handler wherever the script was, and handled by the
    script's top level (stopped()), or by a caller that must stop the job before its own
    cleaning up (stop_child(), then raise again). A BaseException, so that an `except
    Exception` on the way does not swallow it.

    The handler itself never waits for the child: the code it interrupted may be inside
    Popen.wait, holding the lock that another wait needs (scripts/bench and scripts/compare
    hung for ever so)."""
    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _on_stop_signal(signum, _frame):
    for s in STOP_SIGNALS:  # a second signal (another Ctrl-C) does not cut the stopping short
        if signal.getsignal(s) == _on_stop_signal:
            signal.signal(s, signal.SIG_IGN)
    raise Stopped(signum)


# Until catch_stop_signals(), a Ctrl-C ends the script by the signal itself, as before Python
# set its own handler: Python's KeyboardInterrupt printed a traceback of wherever the module
# was (seen when a test's SIGINT came 0.3 s after the start of scripts/compare on a loaded
# machine). A signal ignored at the start stays ignored.
if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def catch_stop_signals():
    """Makes SIGINT, SIGTERM and SIGHUP raise Stopped. A signal ignored when the script started
    stays ignored, for the script and for its children: SIGHUP under nohup, SIGINT in a
    background job of a shell without job control. Call it first thing, before any child
    starts."""
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _on_stop_signal)


@contextlib.contextmanager
def held_stop_signals():
    """Blocks the stopping signals for the `with` block, for a step that must not be cut in two
    (a start and its recording, the making or removing of a temporary folder); one that comes
    meanwhile is taken at the block's end."""
    held = set(STOP_SIGNALS)
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def start(command, own_group=True, **popen_kwargs):
    """subprocess.Popen(command, **popen_kwargs), recorded as the child running now, in a
    session (process group) of its own unless own_group is False (scripts/setup, which may ask
    for sudo's password, stays in the terminal's group).

    The stopping signals are held back from before the start until the child is recorded: one
    that came in between ended the script and left the child running (a CI run of
    scripts_bench_ends timed out so, the nodes spinning on). The child starts with them
    unblocked."""
    held = set(STOP_SIGNALS)
    with held_stop_signals():
        process = subprocess.Popen(command, start_new_session=own_group,
                                   preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, held),
                                   **popen_kwargs)
        _CHILD["process"], _CHILD["own_group"] = process, own_group
    return process


def finish(process, timeout=None):
    """process.communicate(timeout=timeout) -> (stdout, stderr, timed_out). On the timeout the
    child's whole group is stopped (SIGTERM, then SIGKILL after GRACE_S s), and what it wrote
    until then is returned with timed_out True. The child is forgotten once it has ended; if
    Stopped comes meanwhile, it stays recorded, for stopped() or stop_child() to end."""
    try:
        out, err = process.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        stop_child(signal.SIGTERM, close_pipes=False)  # its pipes are read to their end below
        out, err = process.communicate()
        timed_out = True
    if _CHILD["process"] is process:
        _CHILD["process"] = None
    return out, err, timed_out


def run_json(command, who, timeout=None, extra_env=None, explain=None):
    """Runs `command` as the child (its environment with extra_env added), start() then
    finish(), and returns the JSON object on the last line of its standard output: how the
    benchmark drivers run each measuring program. A timeout, a non-zero exit or no JSON line
    ends the script with "WHO: ..." and what the child printed; explain(out, err), if given,
    may return a better account of a failure (None: the usual one)."""
    shown = " ".join([f"{k}={v}" for k, v in (extra_env or {}).items()] + [str(c) for c in command])
    env = dict(os.environ, **extra_env) if extra_env else None
    process = start(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err, timed_out = finish(process, timeout)
    if timed_out:
        sys.exit(f"{who}: timed out after {timeout} s: {shown}")
    if process.returncode != 0:
        account = explain(out, err) if explain else None
        sys.exit(f"{who}: {account or f'{shown} failed ({process.returncode})'}:\n{out}{err}")
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        sys.exit(f"{who}: {shown} printed no JSON line:\n{out}{err}")


def stop_child(signum, close_pipes=True):
    """Passes signum to the child running now (its whole process group, when it has one:
    squallrun stops its nodes, mpirun its ranks), waits up to GRACE_S s for it, then SIGKILLs
    the group if it has not ended, and in any case what is left of the group once its leader
    has gone. close_pipes: first close our ends of its pipes, which nobody reads any more (a
    child blocked on a full pipe would not end). Does nothing without a child; the child is
    forgotten only once it has ended, so that a Stopped raised during the wait here still finds
    it."""
    process, own_group = _CHILD["process"], _CHILD["own_group"]
    if process is None:
        return
    if close_pipes:
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:  # stdin's unwritten data: the child has gone
                    pass

    def send(s):
        try:
            if own_group:
                os.killpg(process.pid, s)
            else:
                process.send_signal(s)
        except ProcessLookupError:  # ended already, the whole group with it
            pass

    send(signum)
    try:
        process.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        process.wait()
    if own_group:
        send(signal.SIGKILL)  # anything of the group still there once its leader has gone
    if _CHILD["process"] is process:
        _CHILD["process"] = None


def run_main(main, who, said=lambda: ""):
    """A script's top level: catch_stop_signals(), then main(), whose result is the exit
    status (None: 0). A stopping signal ends it through stopped(stop, who, said())."""
    catch_stop_signals()
    try:
        status = main()
    except Stopped as stop:
        stopped(stop, who, said())
    sys.exit(status)


def at_stop(cleanup):
    """Registers cleanup() to be called by stopped() once the job has ended (partial files
    removed, say), after those registered before it. Returns cleanup."""
    _CLEANUPS.append(cleanup)
    return cleanup


def stopped(stop, who, said=""):
    """The end of a script stopped by a signal (stop: the Stopped caught at its top level):
    the child's job ended whole, the cleanups registered with at_stop() run, then
    "WHO: stopped by SIGNAME<said>" on standard error and exit status 128 + the signal's
    number. Never returns."""
    stop_child(stop.signum)
    for cleanup in _CLEANUPS:
        cleanup()
    try:
        sys.stdout.flush()  # what the script printed comes before its end
    except OSError:
        pass
    print(f"{who}: stopped by {signal.Signals(stop.signum).name}{said}", file=sys.stderr, flush=True)
    sys.exit(128 + stop.signum)
