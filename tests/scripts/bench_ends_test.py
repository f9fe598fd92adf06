#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/bench at its ends. Figures it cannot record (a folder that passed the check before
the run but takes no file, as /proc does not) are printed with the reason and exit status 1,
never a Python traceback and a 0-byte file. SIGTERM to scripts/bench alone (a CI timeout, a
`kill`) stops the benchmark's job too: it ran on for seconds after scripts/bench had gone.
SIGTERM after the benchmark has closed its output, while scripts/bench waits for it to end,
stops it too (a copy of scripts/bench beside a stand-in benchmark): the handler waited inside
the wait it had interrupted, and scripts/bench hung for ever. SIGTERM while scripts/setup or
scripts/build runs stops them too (a copy beside stand-ins for them)."""
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import processes
from processes import children, kill, running, terminate

ROOT = Path(__file__).resolve().parents[2]
BENCH = str(ROOT / "scripts" / "bench")


def unrecordable(failures):
    if os.geteuid() != 0:  # /proc passes the check before the run only for root
        print("not root: the unrecordable folder is not tried")
        return
    p = subprocess.run([BENCH, "am_pingpong", "--results", "/proc/squall-results", "--iters", "200", "--trials", "1"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    said = "scripts/bench: could not record the results in /proc/squall-results/"
    if p.returncode != 1 or said not in p.stderr or '"am_rtt_us"' not in p.stderr or "Traceback" in p.stderr:
        failures.append(f"--results /proc/...: exit {p.returncode}, expected 1, '{said}' and the figures\n{p.stderr}")


def terminated(failures):
    bench = subprocess.Popen([BENCH, "am_pingpong", "--iters", "100000000", "--trials", "7"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, cwd=ROOT)
    job = []  # squallrun and its nodes, once they run
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(job) < 3:
        time.sleep(0.1)
        launchers = children(bench.pid)
        job = launchers + [n for pid in launchers for n in children(pid)]
    if len(job) < 3:
        failures.append(f"SIGTERM: the benchmark's job did not start within 30 s: {job}")
    bench.send_signal(signal.SIGTERM)
    status = bench.wait(timeout=90)
    left = [pid for pid in job if running(pid)]
    if status != 128 + signal.SIGTERM or left:
        kill(left)  # first: a process left running holds the stderr pipe open
        failures.append(f"SIGTERM: scripts/bench exit {status}, expected 143 with nothing left; left running: {left}\n"
                        f"{bench.stderr.read()}")


def copy_bench(root):
    """A copy of scripts/bench in root/scripts, with scripts/lib, which it imports."""
    (Path(root) / "scripts" / "lib").mkdir(parents=True, exist_ok=True)
    copy = Path(root) / "scripts" / "bench"
    copy.write_text(Path(BENCH).read_text())
    copy.chmod(0o755)
    for module in (ROOT / "scripts" / "lib").glob("*.py"):
        (Path(root) / "scripts" / "lib" / module.name).write_text(module.read_text())
    return copy


def terminated_early(failures):
    """SIGTERM as soon as scripts/bench starts, at several moments of its start: a signal that
    came between the job's start and scripts/bench's handler once ended the script and left
    the job running (the nodes spinning until someone killed them)."""
    iters = 100000007  # marks this test's jobs
    for delay in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5):
        bench = subprocess.Popen([BENCH, "am_pingpong", "--iters", str(iters), "--trials", "7"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        time.sleep(delay)
        bench.send_signal(signal.SIGTERM)
        try:
            bench.wait(timeout=60)
        except subprocess.TimeoutExpired:
            failures.append(f"SIGTERM {delay} s after the start: scripts/bench still running after 60 s")
            bench.kill()
        deadline = time.monotonic() + 10
        while processes.marked(str(iters), b"am_pingpong") and time.monotonic() < deadline:
            time.sleep(0.1)
        left = processes.marked(str(iters), b"am_pingpong")
        if left:
            failures.append(f"SIGTERM {delay} s after the start: the job's nodes {left} were left running")
            kill(left)


def terminate_once_sleeping(bench, mark, settle=0.0):
    """Once a stand-in sleeps `mark` seconds (and `settle` more), SIGTERM to scripts/bench:
    its exit status (or what became of it) and the sleeps it left running, killed since."""
    deadline = time.monotonic() + 30
    while not processes.marked(str(mark), b"sleep") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(settle)
    status = terminate(bench, 30)
    time.sleep(0.5)  # a child's end after its parent's
    left = processes.marked(str(mark), b"sleep")
    kill(left)
    return status, left


def terminated_while_waiting(failures):
    mark = "4242.4244"  # the stand-in's sleep, after it has closed its output
    with tempfile.TemporaryDirectory() as root:
        for folder in ("bench/stand_in", "build/bench"):
            (Path(root) / folder).mkdir(parents=True)
        copy_bench(root)
        (Path(root) / "bench" / "list.tsv").write_text("stand_in\tprints its figures, closes its output, sleeps\n")
        (Path(root) / "bench" / "stand_in" / "stand_in").write_text(
            f"#!/bin/sh\necho '{{\"x\": 1}}'\nexec >&-\nexec sleep {mark}\n")
        (Path(root) / "bench" / "stand_in" / "stand_in").chmod(0o755)
        bench = subprocess.Popen([str(Path(root) / "scripts" / "bench"), "stand_in", "--results", f"{root}/results"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root,
                                 env=dict(os.environ, SQUALL_BUILD_DIR=f"{root}/build"))
        status, left = terminate_once_sleeping(bench, mark, settle=0.2)  # into the wait, past the end of the output
        if status != 128 + signal.SIGTERM or left:
            failures.append(f"SIGTERM while scripts/bench waits for the end: exit {status}, expected 143; left: {left}")


def terminated_while_building(failures):
    """SIGTERM to a copy of scripts/bench (no SQUALL_BUILD_DIR: it sets up and builds) while the
    stand-in for scripts/setup, then for scripts/build, sleeps: before, the script ended and
    left the setup or the build running."""
    mark = "4242.4245"
    with tempfile.TemporaryDirectory() as root:
        copy = copy_bench(root)
        for name in ("setup", "build"):
            stand_in = Path(root) / "scripts" / name
            stand_in.write_text(f'#!/bin/sh\n[ "$BENCH_TEST_SLOW" = {name} ] && exec sleep {mark}\nexit 0\n')
            stand_in.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if k != "SQUALL_BUILD_DIR"}
        for name in ("setup", "build"):
            bench = subprocess.Popen([str(copy), "stand_in", "--results", f"{root}/results"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, cwd=root, env=dict(env, BENCH_TEST_SLOW=name))
            status, left = terminate_once_sleeping(bench, mark)
            err = bench.stderr.read()
            if status != 128 + signal.SIGTERM or left or "Traceback" in err:
                failures.append(f"SIGTERM while scripts/{name} runs: exit {status}, expected 143; left running: {left}\n{err}")


def main():
    failures = []
    unrecordable(failures)
    terminated(failures)
    terminated_early(failures)
    terminated_while_waiting(failures)
    terminated_while_building(failures)
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("passed")


if __name__ == "__main__":
    main()
