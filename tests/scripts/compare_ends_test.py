#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/compare when a run fails, on a build folder of links to
$SQUALL_BUILD_DIR's programs in which some of DSMC's are scripts standing in for them.

A version that fails in the middle of a comparison (dsmc_tsm printing checksum_ok false and
exiting 1, dsmc_xsm killed by SIGSEGV) is named on standard error, the others run on, the
JSON summary and the record mark both (checksum_ok false, "error"), and scripts/compare ends
with status 1: it ended 0, and said nothing."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ["SQUALL_BUILD_DIR"]).resolve()
COMPARE = str(ROOT / "scripts" / "compare")

# Stand-ins, by what the environment asks: COMPARE_TEST_FAIL=1 makes dsmc_tsm's result wrong
# and kills dsmc_xsm.
STAND_INS = {
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
            target.write_text("#!/bin/sh\n" + STAND_INS[program.name].format(real=program))
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


def main():
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        build = stand_in_build(Path(folder))
        failed_versions(build, failures)
    if failures:
        sys.exit("FAILED:\n" + "\n".join(failures))
    print("passed")


if __name__ == "__main__":
    main()
