#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/bench and scripts/compare refuse a bad argument before anything runs: exit status 2
and one line naming the option and the value, never a Python traceback. --results naming a
file is refused before the benchmark runs (its figures would be lost when recorded), and a
count written with a digit that is not 0-9 ('²', which str.isdigit takes) is refused."""
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main():
    failures = []
    with tempfile.NamedTemporaryFile(prefix="squall-results-") as plain:
        cases = [
            (["bench", "am_pingpong", "--results", plain.name, "--iters", "200", "--trials", "1"],
             f"--results: {plain.name} is not a directory"),
            (["bench", "am_pingpong", "--results", plain.name + "/deeper"], f"--results: {plain.name} is not a directory"),
            (["bench", "am_pingpong", "-n", "\u00b2"], "-n: expected a positive number of nodes, got '\u00b2'"),
            (["compare", "--repeat", "\u00b2"], "--repeat takes a positive number of runs, not '\u00b2'"),
            (["compare", "--block-size", "\u00b2"], "--block-size takes a power of two"),
        ]
        for args, said in cases:
            p = subprocess.run([str(ROOT / "scripts" / args[0]), *args[1:]], capture_output=True, text=True,
                               timeout=60, cwd=ROOT)
            if p.returncode != 2 or said not in p.stderr or "Traceback" in p.stderr or p.stdout:
                failures.append(f"{' '.join(args)}: exit {p.returncode}, expected 2 and '{said}' alone\n"
                                f"stdout: {p.stdout}\nstderr: {p.stderr}")
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("passed")


if __name__ == "__main__":
    main()
