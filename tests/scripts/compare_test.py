#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/compare on the build in $SQUALL_BUILD_DIR at the small size on 1 and 2 nodes: every
version built reports its figures with its checksum right, the tables are printed, the last line
is the JSON summary the issue describes, the record holds two runs of every version (--repeat 2)
with their median, a time target is the median of the ratios within the rounds, and the plots
are written."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ["SQUALL_BUILD_DIR"])
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
KEYS = {"nodes", "time_s", "speedup", "misses", "messages", "bytes", "checksum_ok"}


XSM_OF = {"unstructured": "xsm_node_update", "moldyn": "xsm_bulk_reduction", "dsmc": "xsm"}


def round_ratio_failures(rounds, stdout):
    """Each app's two rounds hold CHAOS's and the final XSM's times at 2 nodes, and the printed
    XSM / CHAOS target is the median (here the mean) of the two rounds' ratios."""
    failures = []
    for app, xsm in XSM_OF.items():
        per_round = rounds.get(app, [])
        if len(per_round) != 2 or not all(r.get("chaos") and r.get(xsm) for r in per_round):
            failures.append(f"{app}: rounds recorded {per_round}")
            continue
        expected = sum(r[xsm] / r["chaos"] for r in per_round) / 2
        line = f"{app}: XSM ({xsm}) / CHAOS time <= 1.05: "
        printed = [x for x in stdout.splitlines() if x.strip().startswith(line)]
        if not printed or f"({expected:.3f})" not in printed[0]:
            failures.append(f"{app}: XSM / CHAOS printed {printed}, expected the ratio {expected:.3f}")
    return failures


def main():
    with tempfile.TemporaryDirectory() as results:
        p = subprocess.run([str(ROOT / "scripts" / "compare"), "--size", "small", "--nodes", "1,2", "--repeat", "2",
                            "--json", "--results", results], capture_output=True, text=True, timeout=900, cwd=ROOT)
        if p.returncode != 0:
            sys.exit(f"FAILED: scripts/compare exited {p.returncode}\n{p.stdout}{p.stderr}")
        failures = []
        for table in ("Table 2: Unstructured", "Table 3: Moldyn", "Table 4: DSMC"):
            if table not in p.stdout:
                failures.append(f"no '{table}' in the output")
        summary = json.loads(p.stdout.strip().splitlines()[-1])
        if set(summary) != {"unstructured", "moldyn", "dsmc"}:
            failures.append(f"the summary's apps: {sorted(summary)}")
        versions = 0
        for app, per_version in summary.items():
            built = {x.name[len(app) + 1:] for x in (BUILD / "bin").glob(f"{app}_*")
                     if not x.name.endswith(("_seq", "_test"))}
            for version in sorted(built - set(per_version)):
                failures.append(f"{app}_{version} is built but not in the summary")
            for version, figures in per_version.items():
                versions += 1
                if set(figures) != KEYS:
                    failures.append(f"{app} {version}: keys {sorted(figures)}")
                if figures.get("checksum_ok") is not True:
                    failures.append(f"{app} {version}: checksum not ok")
                if figures.get("nodes") != 2:
                    failures.append(f"{app} {version}: nodes {figures.get('nodes')}, expected the largest timed count")
        records = list(Path(results).glob("compare-*.json"))
        if len(records) != 1:
            failures.append(f"records written: {records}")
        else:  # every timed version ran twice, its figures the medians of the two
            for app, per_version in json.loads(records[0].read_text())["runs"].items():
                for version, by_nodes in per_version.items():
                    for n, r in by_nodes.items():
                        if r.get("runs") != 2 or len(r.get("time_s_runs", [])) != 2:
                            failures.append(f"{app} {version} on {n} nodes: {r.get('runs')} runs recorded")
                        elif abs(r["time_s"] - sum(r["time_s_runs"]) / 2) > 1e-9:
                            failures.append(f"{app} {version} on {n} nodes: time_s is not the median of its runs")
            failures += round_ratio_failures(json.loads(records[0].read_text())["rounds"], p.stdout)
        for png in Path(results).glob("compare-*.png"):
            if png.read_bytes()[:8] != PNG_MAGIC:
                failures.append(f"{png.name} is not a PNG file")
        if versions > 0 and not list(Path(results).glob("compare-*.png")):
            failures.append("no plot written")
        if failures:
            sys.exit("FAILED:\n  " + "\n  ".join(failures) + f"\n{p.stdout}")
        print(f"scripts/compare: {versions} versions at the small size on 1 and 2 nodes, checksums right")


if __name__ == "__main__":
    main()
