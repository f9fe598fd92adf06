#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/bench and scripts/plot on the build in $SQUALL_BUILD_DIR (which scripts/bench then
uses as it is, without building): the listing describes every benchmark; two quick runs
(am_pingpong, tsm_blocksize) are recorded with their machine, commit, date and settings; and
scripts/plot draws its three pictures from them as PNG files."""
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ["SQUALL_BUILD_DIR"])
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(*command):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=60, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, command))} exited {result.returncode}\n{result.stdout}{result.stderr}")
    return result.stdout


def check_listing():
    listing = run(ROOT / "scripts" / "bench")
    runnable = [p.name for p in (BUILD / "bench").iterdir() if os.access(p, os.X_OK) and p.is_file()]
    runnable += [p.name for p in ROOT.glob("bench/*/*") if p.is_file() and os.access(p, os.X_OK)]
    check(len(runnable) >= 2, f"found only {runnable} to list")
    for name in runnable:
        lines = [line for line in listing.splitlines() if line.split()[:1] == [name]]
        check(len(lines) == 1 and "no description" not in lines[0],
              f"scripts/bench does not describe {name} in one line:\n{listing}")


def check_record(path, benchmark, args, figure):
    r = json.loads(path.read_text())
    check(r.get("benchmark") == benchmark, f"{path.name}: benchmark {r.get('benchmark')}")
    try:
        datetime.datetime.fromisoformat(r.get("date", ""))
    except ValueError:
        check(False, f"{path.name}: date {r.get('date')!r} is not ISO 8601")
    if (ROOT / ".git").exists():
        commit = r.get("commit") or ""
        check(len(commit) == 40 and all(c in "0123456789abcdef" for c in commit), f"{path.name}: commit {commit!r}")
        check(isinstance(r.get("dirty"), bool), f"{path.name}: dirty {r.get('dirty')!r}")
    m = r.get("machine", {})
    check(bool(m.get("cpu")) and isinstance(m.get("cores"), int) and m["cores"] > 0 and bool(m.get("kernel")),
          f"{path.name}: machine {m}")
    check(r.get("nodes") == 2, f"{path.name}: nodes {r.get('nodes')}")
    check(r.get("settings", {}).get("args") == args and isinstance(r["settings"].get("env"), dict),
          f"{path.name}: settings {r.get('settings')}")
    check(isinstance(r.get("figures", {}).get(figure), (int, float)), f"{path.name}: no figure {figure}")


def main():
    check_listing()
    with tempfile.TemporaryDirectory(prefix="squall-bench-") as tmp:
        results = Path(tmp) / "results"
        runs = [("am_pingpong", ["--iters", "200", "--trials", "1"], "ratio"),
                ("tsm_blocksize", ["--trials", "1"], "sweep_4k_misses")]
        for benchmark, args, _ in runs:
            run(ROOT / "scripts" / "bench", benchmark, "-n", "2", "--results", results, *args)
        for benchmark, args, figure in runs:
            records = list(results.glob(f"*-{benchmark}-n2.json"))
            if check(len(records) == 1, f"{benchmark}: records {records}"):
                check_record(records[0], benchmark, args, figure)

        plots = Path(tmp) / "plots"
        said = run(ROOT / "scripts" / "plot", results, "--out", plots)
        for picture in ("latency.png", "ratios.png", "tsm_blocksize.png"):
            png = plots / picture
            if check(png.is_file(), f"{picture} not drawn; scripts/plot said:\n{said}"):
                check(png.read_bytes()[:8] == PNG_MAGIC, f"{picture} is not a PNG file")
                check(f"drew {png}" in said, f"scripts/plot did not say it drew {picture}:\n{said}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
