#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/chaos/chaos_exchange stopped by SIGTERM, SIGINT and SIGHUP while its first program runs
(a stand-in for squallrun that sleeps): it ends with 128 + the signal's number, the program's job
with it, and its temporary folder (the partition file's) is removed. SIGTERM and SIGHUP ended
the script at once, and left the folder and the job behind."""
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from processes import running

ROOT = Path(__file__).resolve().parents[2]
CHAOS_EXCHANGE = str(ROOT / "bench" / "chaos" / "chaos_exchange")


def stopped_while_running(signum, root, failures):
    name = signal.Signals(signum).name
    build = Path(root) / "build"
    tmp = Path(root) / f"tmp-{name}"  # chaos_exchange's temporary folders go here
    started = Path(root) / f"started-{name}"  # the stand-in's pid, once it runs
    (build / "bin").mkdir(parents=True, exist_ok=True)
    tmp.mkdir()
    stand_in = build / "bin" / "squallrun"
    stand_in.write_text('#!/bin/sh\necho $$ > "$STAND_IN_STARTED"\nexec sleep 4242\n')
    for program in ("chaos_exchange_squall", "chaos_exchange_mpi"):  # looked for, never run here
        (build / "bin" / program).write_text("#!/bin/sh\nexit 1\n")
    for program in build.glob("bin/*"):
        program.chmod(0o755)
    # SIGINT as a terminal's Ctrl-C leaves it, also where ctest was started with it ignored.
    # Standard error to a file: a process left running would hold a pipe open.
    err_file = tempfile.TemporaryFile(mode="w+")
    script = subprocess.Popen([CHAOS_EXCHANGE, "-n", "2", "--rounds", "1"], stdout=subprocess.DEVNULL,
                              stderr=err_file, text=True,
                              env=dict(os.environ, SQUALL_BUILD_DIR=str(build), TMPDIR=str(tmp),
                                       STAND_IN_STARTED=str(started)),
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not (started.exists() and started.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not started.exists():
        script.kill()
        script.wait()
        err_file.seek(0)
        failures.append(f"{name}: the stand-in for squallrun did not start within 30 s\n{err_file.read()}")
        return
    job = int(started.read_text())
    folders = list(tmp.iterdir())
    if len(folders) != 1 or not folders[0].name.startswith("chaos_exchange-"):
        failures.append(f"{name}: while the program ran, the temporary folders were {folders}, expected one")
    script.send_signal(signum)
    try:
        status = script.wait(timeout=60)
    except subprocess.TimeoutExpired:
        script.kill()
        status = f"still running 60 s later (killed: {script.wait()})"
    err_file.seek(0)
    err = err_file.read()
    left_folders = list(tmp.iterdir())
    left_running = running(job)
    if left_running:
        os.kill(job, signal.SIGKILL)
    if status != 128 + signum or left_folders or left_running or f"stopped by {name}" not in err:
        failures.append(f"{name}: exit {status}, expected {128 + signum} and 'stopped by {name}'; folders left: "
                        f"{left_folders}; the program's job left running: {left_running}\n{err}")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as root:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            stopped_while_running(signum, root, failures)
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("passed")


if __name__ == "__main__":
    main()
