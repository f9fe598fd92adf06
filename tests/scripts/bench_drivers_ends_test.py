#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Python drivers of bench/ that run jobs (parmacs, tsm_jacobi, apps_serial, tcp_pingpong,
ucx_pingpong) stopped by SIGTERM to the driver alone (a `kill`, a CI timeout) while their first
program runs: the driver ends with 143 and says so, and no process of the job is left. The
program is a stand-in that starts two processes, as squallrun starts its nodes, and waits for
them. Each driver used to end alone and leave its job running (squallrun and its nodes
computing on). bench/chaos/chaos_exchange has its own test (chaos_exchange_ends_test.py)."""
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
MARK = "4242.4246"  # the stand-ins' sleeps: marks this test's processes

# driver, its arguments, and the programs it looks for in the build folder (the first it runs
# is squallrun, or unstructured_seq for apps_serial: every one of them is the stand-in).
DRIVERS = [
    ("bench/parmacs/parmacs", ["--rounds", "1", "--programs", "sor", "--small"],
     ["bin/squallrun", "bin/parmacs_sor", "bench/pthreads_sor"]),
    ("bench/tsm/tsm_jacobi", ["--rounds", "1", "--n", "64", "--iterations", "1"],
     ["bin/squallrun", "bench/jacobi_run"]),
    ("bench/apps/apps_serial", [], ["bin/unstructured_seq", "bin/moldyn_seq", "bin/dsmc_seq"]),
    ("bench/tcp/tcp_pingpong", ["--rounds", "1"],
     ["bin/squallrun", "bin/tcp_pingpong_am", "bin/tcp_pingpong_raw", "bin/tcp_pingpong_mpi"]),
    ("bench/ucx/ucx_pingpong", ["--rounds", "1"],
     ["bin/squallrun", "bin/tcp_pingpong_am", "bin/tcp_pingpong_mpi", "bench/tsm_miss"]),
]
STAND_IN = f"#!/bin/sh\nsleep {MARK} &\nsleep {MARK} &\nwait\n"


def marked():
    """The stand-ins' sleeps still running."""
    return processes.marked(MARK)


def stopped_while_running(driver, args, programs, root, failures):
    name = Path(driver).name
    build = Path(root) / name
    for program in programs:
        (build / program).parent.mkdir(parents=True, exist_ok=True)
        (build / program).write_text(STAND_IN)
        (build / program).chmod(0o755)
    (build / "path").mkdir()  # mpirun, looked for on PATH by the ping-pongs, never run here
    (build / "path" / "mpirun").write_text("#!/bin/sh\nexit 1\n")
    (build / "path" / "mpirun").chmod(0o755)
    env = dict(os.environ, SQUALL_BUILD_DIR=str(build), PATH=f"{build / 'path'}:{os.environ.get('PATH', '')}")
    # Standard error to a file: a process left running would hold a pipe open.
    err_file = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen([str(ROOT / driver), *args], stdout=subprocess.DEVNULL, stderr=err_file,
                               text=True, env=env)
    deadline = time.monotonic() + 30
    while len(marked()) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    job = children(process.pid) + marked()  # the stand-in and its two sleeps
    if len(job) < 3:
        process.kill()
        process.wait()
        kill(marked())
        err_file.seek(0)
        failures.append(f"{name}: the stand-in's job did not start within 30 s (status {process.returncode})\n"
                        f"{err_file.read()}")
        return
    status = terminate(process, 60)
    deadline = time.monotonic() + 5  # a process's last moments, after its group's leader's
    while any(running(pid) for pid in job) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in job if running(pid)]
    kill(left)
    err_file.seek(0)
    err = err_file.read()
    said = f"{name}: stopped by SIGTERM"
    if status != 128 + signal.SIGTERM or left or said not in err or "Traceback" in err:
        failures.append(f"{name}: exit {status}, expected 143 and '{said}'; the job's processes left running: "
                        f"{left}\n{err}")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as root:
        try:
            for driver, args, programs in DRIVERS:
                stopped_while_running(driver, args, programs, root, failures)
        finally:
            kill(marked())
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("passed")


if __name__ == "__main__":
    main()
