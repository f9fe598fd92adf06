#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/bench and scripts/compare refuse a bad argument before anything runs: exit status 2
and one line naming the option and the value, never a Python traceback. --results naming a
file is refused before the benchmark runs (its figures would be lost when recorded), and a
count written with a digit that is not 0-9 ('²', which str.isdigit takes) is refused. Every
benchmark of bench/list.tsv refuses an option it does not know (a misspelt --iters ran the
defaults), through scripts/bench as a user runs it; the PARMACS programs built with pthreads
(pthreads_*), peers that bench/parmacs runs, are refused by scripts/bench as such (it gave
them --json, which they do not know, and so could never run them). scripts/bench refuses more
nodes than squallrun starts, -n or --results given twice, and an option for --results' value;
scripts/compare refuses a
node count or an application named twice in a list, an option given twice, an option's value
that is the next option ('--results --json' took --json for the folder), a block size above
libtsm's 64 MiB, and a --results that is a file or under one (each ran the whole experiment,
then failed with a traceback when writing); and a SQUALL_BUILD_DIR without squallrun (a
traceback). scripts/probe refuses a bad node count, transport, test pattern or job count, and
an unknown option. scripts/demo, which took no arguments and ignored them, refuses one (a misspelt
option ran the whole demonstration), as it refuses a SQUALL_BUILD_DIR without squallrun."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_script(args, env=None):
    """scripts/<args[0]> in a session of its own, ended whole (SIGTERM, then SIGKILL) if it runs
    on: a script that took a bad argument and ran would leave its job running past the test."""
    p = subprocess.Popen([str(ROOT / "scripts" / args[0]), *args[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=ROOT, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=60)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        for signum, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, None)):
            try:
                os.killpg(p.pid, signum)
            except ProcessLookupError:
                pass
            try:
                out, err = p.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        return subprocess.CompletedProcess(p.args, "still running after 60 s", out, err)


def unreachable_results(failures):
    """--results under a folder the user may not look in, or in one it may not write in: one
    line and status 2 (Path.exists raised PermissionError: a traceback). Run as nobody, since
    root may look and write everywhere."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        print("not root, or no setpriv: --results out of reach is not tried")
        return
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    scripts = [str(ROOT / "scripts" / name) for name in ("compare", "bench")]
    if subprocess.run([*nobody, "test", "-r", scripts[0], "-a", "-r", scripts[1]]).returncode != 0:
        print("the scripts are not readable by nobody: --results out of reach is not tried")
        return
    with tempfile.TemporaryDirectory() as closed:  # mode 0700, root's: nobody may not look in it
        check_as(nobody, scripts[0], ["--results", f"{closed}/x"],
                 f"--results: cannot reach {closed}/x: Permission denied", failures)
        check_as(nobody, scripts[1], ["am_pingpong", "--results", f"{closed}/x/y"],
                 f"--results: cannot reach {closed}/x/y: Permission denied", failures)
        read_only = Path(closed) / "read-only"
        read_only.mkdir(mode=0o755)
        os.chmod(closed, 0o711)  # nobody may pass through now, into a folder it may not write in
        check_as(nobody, scripts[0], ["--results", f"{read_only}/x"], f"--results: cannot write in {read_only}",
                 failures)


def check_as(prefix, script, args, said, failures):
    p = subprocess.run([*prefix, script, *args], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, SQUALL_BUILD_DIR="/nonexistent-squall-build"))
    if p.returncode != 2 or said not in p.stderr or "Traceback" in p.stderr or p.stdout:
        failures.append(f"as nobody, {Path(script).name} {' '.join(args)}: exit {p.returncode}, expected 2 and "
                        f"'{said}' alone\nstdout: {p.stdout}\nstderr: {p.stderr}")


def unknown_option_cases():
    """`scripts/bench NAME --iter 5` for every benchmark listed, with what it must say: a
    program through bench/common/report.hpp (or its family's parser), a script through
    argparse, which must not take --iter for --iterations or --iters either; a peer that
    another benchmark runs (pthreads_*) is refused as such, whatever the options."""
    scripts = {p.name for p in ROOT.glob("bench/*/*") if p.is_file() and os.access(p, os.X_OK)}
    cases = []
    for line in (ROOT / "bench" / "list.tsv").read_text().splitlines():
        name = line.split("\t")[0].strip()
        if not name or line.startswith("#"):
            continue
        if name in scripts:
            said = "unrecognized arguments: --iter 5"
        elif "\tpeer of " in line:  # a peer that another benchmark runs (it ran with --json, and failed)
            said = f"{name} is a peer that `scripts/bench {line.split('peer of ')[1].split(':')[0]}` times"
        else:
            said = f"{name}: unknown option '--iter'"
        cases.append((["bench", name, "--iter", "5"], said))
    return cases


def main():
    failures = []
    with tempfile.NamedTemporaryFile(prefix="squall-results-") as plain:
        cases = [
            (["bench", "am_pingpong", "--results", plain.name, "--iters", "200", "--trials", "1"],
             f"--results: {plain.name} is not a directory"),
            (["bench", "am_pingpong", "--results", plain.name + "/deeper"], f"--results: {plain.name} is not a directory"),
            (["bench", "am_pingpong", "-n", "\u00b2"], "-n: expected a number of nodes from 1 to 1024 (squallrun's -n), got '\u00b2'"),
            # squallrun refused it after the build, in two lines
            (["bench", "am_pingpong", "-n", "2000"], "-n: expected a number of nodes from 1 to 1024 (squallrun's -n), got '2000'"),
            (["bench", "am_pingpong", "-n", "2", "-n", "3"], "-n given twice"),
            (["bench", "am_pingpong", "--results", "--json"], "--results needs a value"),  # made a folder named --json
            (["compare", "--repeat", "\u00b2"], "--repeat takes a positive number of runs, not '\u00b2'"),
            (["compare", "--block-size", "\u00b2"], "--block-size takes a power of two"),
            # squallrun starts at most 1024 nodes (checked below): a larger count ran, and failed, every version.
            (["compare", "--nodes", "2000"], "--nodes takes node counts from 1 to 1024 (squallrun's -n), such as 1,2, not '2000'"),
            (["compare", "--count-nodes", "8,1025"], "--count-nodes takes node counts from 1 to 1024"),
            (["compare", "--nodes", "1,+2"], "--nodes takes node counts from 1 to 1024"),
            (["compare", "--nodes", "1,2,1"], "--nodes names 1 more than once ('1,2,1')"),
            (["compare", "--count-nodes", "8,8"], "--count-nodes names 8 more than once"),
            (["compare", "--app", "dsmc,moldyn,dsmc"], "--app names dsmc more than once"),
            (["compare", "--nodes", "1", "--nodes", "2"], "--nodes given twice"),
            (["compare", "--results", "--json"], "--results needs a value"),
            (["compare", "--size", "--no-figure6"], "--size needs a value"),
            (["compare", "--block-size", str(1 << 27)], f"--block-size takes a power of two from 4096 to {1 << 26} (64 MiB)"),
            (["compare", "--results", plain.name], f"--results: {plain.name} is not a directory"),
            (["compare", "--results", plain.name + "/deeper"], f"--results: {plain.name} is not a directory"),
            (["probe", "--nodes", "0"], "--nodes takes node counts from 1 to 1024, such as 3,5,6, not '0'"),
            (["probe", "--nodes"], "--nodes needs a value"),
            (["probe", "--transports", "rdma"], "--transports takes shm, tcp, ucx, not 'rdma'"),
            (["probe", "--tests", "("], "--tests: '(' is not a regular expression"),
            (["probe", "-j", "x"], "-j takes a whole number from 1, not 'x'"),
            (["probe", "--bogus"], "unknown argument '--bogus'"),
            (["demo", "--bogus"], "scripts/demo: takes no arguments (got '--bogus')"),
            (["demo", "2"], "scripts/demo: takes no arguments (got '2')"),
        ]
        cases += unknown_option_cases()
        cases += [(["bench", "am_pingpong", "--iter", "5"], "unknown option '--iter' (the options are --iters V, "),
                  (["bench", "am_pingpong", "--iters", "0"], "am_pingpong: --iters: expected a positive integer, got '0'"),
                  (["bench", "am_stream", "-k", "x"], "am_stream: -k: expected a positive integer, got 'x'")]
        for args, said in cases:
            p = run_script(args)
            if p.returncode != 2 or said not in p.stderr or "Traceback" in p.stderr or p.stdout:
                failures.append(f"{' '.join(args)}: exit {p.returncode}, expected 2 and '{said}' alone\n"
                                f"stdout: {p.stdout}\nstderr: {p.stderr}")
    # A build folder without squallrun: refused before anything runs (scripts/compare ran every
    # version, then failed with a traceback for the sequential program it could not start).
    for script in ("compare", "demo", "probe"):
        p = run_script([script], env=dict(os.environ, SQUALL_BUILD_DIR="/nonexistent-squall-build"))
        said = "SQUALL_BUILD_DIR=/nonexistent-squall-build holds no bin/squallrun"
        if p.returncode != 2 or said not in p.stderr or "Traceback" in p.stderr or p.stdout:
            failures.append(f"scripts/{script} with SQUALL_BUILD_DIR=/nonexistent-squall-build: exit {p.returncode}, "
                            f"expected 2 and '{said}'\nstdout: {p.stdout}\nstderr: {p.stderr}")
    unreachable_results(failures)
    # scripts/compare's bound is squallrun's.
    squallrun = Path(os.environ["SQUALL_BUILD_DIR"]) / "bin" / "squallrun"
    p = subprocess.run([str(squallrun), "-n", "1025", "/bin/true"], capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or "-n must be an integer from 1 to 1024" not in p.stderr:
        failures.append(f"squallrun -n 1025: exit {p.returncode}, expected 2 and its bound 1024 (scripts/compare's "
                        f"MAX_NODES)\n{p.stderr}")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("passed")


if __name__ == "__main__":
    main()
