#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/compare when a run fails, and when it is stopped, on a build folder of links to
$SQUALL_BUILD_DIR's programs in which some of DSMC's are scripts standing in for them.

A version that fails in the middle of a comparison (dsmc_tsm printing checksum_ok false and
exiting 1, dsmc_xsm killed by SIGSEGV) is named on standard error, the others run on, the
JSON summary and the record mark both (checksum_ok false, "error"), and scripts/compare ends
with status 1: it ended 0, and said nothing.

SIGTERM, SIGINT or SIGHUP to scripts/compare alone, or SIGINT to its process group (a
terminal's Ctrl-C), while the sequential reference or a version's job runs, or as it starts,
ends it with 128 + the signal and leaves no process of the job running and no record, whole
or partial: SIGTERM ended scripts/compare and left the job running, its nodes computing on.
So does a signal while scripts/setup or scripts/build runs (a copy of scripts/compare beside
stand-ins for the two that wait): the handler waited for the child inside the wait it had
interrupted, and scripts/compare hung for ever."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import processes

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ["SQUALL_BUILD_DIR"]).resolve()
COMPARE = str(ROOT / "scripts" / "compare")
MARK = "424242"  # the seed of the runs that never end: marks this test's processes

# Stand-ins, by what the environment asks: COMPARE_TEST_FAIL=1 makes dsmc_tsm's result wrong
# and kills dsmc_xsm; COMPARE_TEST_SLOW=seq or chaos makes that program run for ever (a
# hundred million steps, marked by the seed).
STAND_INS = {
    "dsmc_seq": '[ "$COMPARE_TEST_SLOW" = seq ] && exec {real} --cells 12 8 8 --steps 100000000 --seed {mark} --json\n'
                'exec {real} "$@"\n',
    "dsmc_chaos": '[ "$COMPARE_TEST_SLOW" = chaos ] && exec {real} --cells 12 8 8 --steps 100000000 --seed {mark} --json\n'
                  'exec {real} "$@"\n',
    "dsmc_tsm": '[ "$COMPARE_TEST_FAIL" = 1 ] || exec {real} "$@"\n'
                '{real} "$@" | sed \'s/"checksum_ok":"true"/"checksum_ok":"false"/\'\n'
                'exit 1\n',
    "dsmc_xsm": '[ "$COMPARE_TEST_FAIL" = 1 ] || exec {real} "$@"\n'
                'echo "dsmc_xsm: stand-in, crashing" >&2\n'
                'kill -SEGV $$\n',
}


def stand_in_build(folder):
    (folder / "bin").mkdir()
    for program in (BUILD / "bin").iterdir():
        target = folder / "bin" / program.name
        if program.name in STAND_INS:
            target.write_text("#!/bin/sh\n" + STAND_INS[program.name].format(real=program, mark=MARK))
            target.chmod(0o755)
        else:
            target.symlink_to(program)
    return folder


def compare_args(results, *more):
    return [COMPARE, "--app", "dsmc", "--size", "small", "--repeat", "1", "--no-figure6", "--results", str(results),
            *more]


def failed_versions(build, failures):
    with tempfile.TemporaryDirectory() as results:
        env = dict(os.environ, SQUALL_BUILD_DIR=str(build), COMPARE_TEST_FAIL="1")
        p = subprocess.run(compare_args(results, "--nodes", "1", "--json"), capture_output=True, text=True, env=env,
                           timeout=300, cwd=ROOT)
        said = ["scripts/compare: dsmc_tsm on 1 node failed: exit 1; checksum_ok false",
                "scripts/compare: dsmc_xsm on 1 node failed: exit 139",
                "scripts/compare: 2 failed (marked in the tables and in"]
        if p.returncode != 1 or any(s not in p.stderr for s in said) or "Traceback" in p.stderr:
            failures.append(f"failed versions: exit {p.returncode}, expected 1 and {said}\n{p.stdout}{p.stderr}")
            return
        summary = json.loads(p.stdout.strip().splitlines()[-1])["dsmc"]
        for version, ok in (("chaos", True), ("mpi", True), ("tsm", False), ("xsm", False)):
            figures = summary.get(version)
            if version == "mpi" and figures is None and not (BUILD / "bin" / "dsmc_mpi").exists():
                continue
            if figures is None or figures.get("checksum_ok") is not ok or ("error" in figures) == ok:
                failures.append(f"failed versions: the summary's {version}: {figures}, expected checksum_ok {ok}"
                                f"{'' if ok else ' and an error'}")
        records = list(Path(results).glob("compare-*.json"))
        if len(records) != 1:
            failures.append(f"failed versions: records {records}")
            return
        listed = json.loads(records[0].read_text()).get("failures", [])
        if len(listed) != 2 or not listed[0].startswith("dsmc_tsm on 1 node: exit 1") or \
                not listed[1].startswith("dsmc_xsm on 1 node: exit 139"):
            failures.append(f"failed versions: the record's failures: {listed}")


def stopped(build, failures, slow, signum, when, group=False):
    """Starts scripts/compare with COMPARE_TEST_SLOW=slow, sends signum `when` (seconds after the
    start, or "running": once the slow program runs) to it, or to its group, and checks the end."""
    what = f"{signal.Signals(signum).name} {'to the group ' if group else ''}{when}{' s' if when != 'running' else ''} " \
           f"into {'the sequential reference' if slow == 'seq' else 'a version'}"
    with tempfile.TemporaryDirectory() as results:
        env = dict(os.environ, SQUALL_BUILD_DIR=str(build), COMPARE_TEST_SLOW=slow)
        # Standard error to a file: a process left running would hold a pipe open.
        err_file = tempfile.TemporaryFile(mode="w+")
        compare = subprocess.Popen(compare_args(results, "--nodes", "2"), stdout=subprocess.DEVNULL,
                                   stderr=err_file, env=env, cwd=ROOT, start_new_session=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        if when == "running":
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(processes.marked(MARK)) < (1 if slow == "seq" else 2):
                time.sleep(0.05)
            if not processes.marked(MARK):
                failures.append(f"{what}: the slow program did not start within 60 s")
        else:
            time.sleep(when)
        if group:
            os.killpg(compare.pid, signum)
        else:
            compare.send_signal(signum)
        try:
            compare.wait(timeout=90)
        except subprocess.TimeoutExpired:
            compare.kill()
            compare.wait()
            failures.append(f"{what}: scripts/compare still running 90 s later")
        deadline = time.monotonic() + 10  # the nodes' last moments, after squallrun's
        while processes.marked(MARK) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = processes.marked(MARK)
        processes.kill(processes.marked(MARK))
        err_file.seek(0)
        err = err_file.read()
        written = sorted(p.name for p in Path(results).iterdir())
        # A signal before Python set its handlers ends it by the signal itself: nothing had started.
        ended = compare.returncode in (128 + signum, -signum) if when != "running" else compare.returncode == 128 + signum
        if not ended or left or written or "Traceback" in err:
            failures.append(f"{what}: exit {compare.returncode}, expected {128 + signum}; left running: {left}; "
                            f"written: {written}\n{err}")


SLEEP_MARK = "4242.4243"  # the stand-ins for scripts/setup and scripts/build sleep this long


def stopped_while_building(failures):
    """SIGTERM to a copy of scripts/compare (no SQUALL_BUILD_DIR: it sets up and builds) while
    the stand-in for scripts/setup, then for scripts/build, sleeps."""
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / "scripts" / "lib").mkdir(parents=True)
        copy = Path(root) / "scripts" / "compare"
        copy.write_text(Path(COMPARE).read_text())
        copy.chmod(0o755)
        for module in (ROOT / "scripts" / "lib").glob("*.py"):  # what the copy imports
            (Path(root) / "scripts" / "lib" / module.name).write_text(module.read_text())
        for name in ("setup", "build"):
            stand_in = Path(root) / "scripts" / name
            stand_in.write_text(f'#!/bin/sh\n[ "$COMPARE_TEST_SLOW" = {name} ] && exec sleep {SLEEP_MARK}\nexit 0\n')
            stand_in.chmod(0o755)
        for name in ("setup", "build"):
            env = {k: v for k, v in os.environ.items() if k != "SQUALL_BUILD_DIR"}
            err_file = tempfile.TemporaryFile(mode="w+")
            compare = subprocess.Popen([str(copy), "--app", "dsmc", "--results", str(Path(root) / "results")],
                                       stdout=subprocess.DEVNULL, stderr=err_file, env=dict(env, COMPARE_TEST_SLOW=name),
                                       cwd=root)
            deadline = time.monotonic() + 30
            while not processes.marked(SLEEP_MARK) and time.monotonic() < deadline:
                time.sleep(0.05)
            compare.send_signal(signal.SIGTERM)
            try:
                compare.wait(timeout=30)
            except subprocess.TimeoutExpired:
                compare.kill()
                compare.wait()
            time.sleep(0.5)
            left = processes.marked(SLEEP_MARK)
            processes.kill(processes.marked(SLEEP_MARK))
            err_file.seek(0)
            err = err_file.read()
            if compare.returncode != 128 + signal.SIGTERM or left or "Traceback" in err:
                failures.append(f"SIGTERM while scripts/{name} runs: exit {compare.returncode}, expected 143 at once; "
                                f"left running: {left}\n{err}")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        build = stand_in_build(Path(folder))
        try:
            failed_versions(build, failures)
            for slow, signum, when, group in (("seq", signal.SIGTERM, "running", False),
                                              ("chaos", signal.SIGTERM, "running", False),
                                              ("chaos", signal.SIGINT, "running", False),
                                              ("chaos", signal.SIGINT, "running", True),
                                              ("chaos", signal.SIGHUP, "running", False),
                                              ("seq", signal.SIGTERM, 0.0, False),
                                              ("seq", signal.SIGTERM, 0.1, False),
                                              # Once it runs: a fixed delay raced the imports
                                              # on a loaded machine (a KeyboardInterrupt inside
                                              # `import json` before child_job's handlers).
                                              ("seq", signal.SIGINT, "running", True)):
                stopped(build, failures, slow, signum, when, group)
            stopped_while_building(failures)
        finally:
            processes.kill(processes.marked(MARK))
            processes.kill(processes.marked(SLEEP_MARK))
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("passed")


if __name__ == "__main__":
    main()
