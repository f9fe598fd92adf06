#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# scripts/test-costs --print: the table it would write keeps test_costs.txt's header and has a
# row of four fields (a test, then whole seconds or "-" for each build) for every test it keeps,
# longest first, none of them under 5 s everywhere; it never writes the table here. And every row
# of tests/test_costs.txt names a test of this build (a renamed test's row would cost nothing),
# which has the table's release figure as its COST.
import json
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
table = os.path.join(root, "tests", "test_costs.txt")
before = open(table).read()
out = subprocess.run([os.path.join(root, "scripts", "test-costs"), "--print"], check=True, capture_output=True,
                     text=True).stdout
failures = []
header = [l for l in before.splitlines() if l.startswith("#")]
printed = out.splitlines()
if printed[:len(header)] != header:
    failures.append("the header is not kept")
longest = []
for line in printed[len(header):]:
    fields = line.split()
    if len(fields) != 4 or not all(re.fullmatch(r"[0-9]+|-", f) for f in fields[1:]):
        failures.append(f"a bad row: {line!r}")
        continue
    longest.append(max(int(f) for f in fields[1:] if f != "-"))
if not longest:
    failures.append("no rows")
if longest != sorted(longest, reverse=True):
    failures.append(f"rows not longest first: {longest}")
if any(s < 5 for s in longest):
    failures.append("a row under 5 s")
listed = subprocess.run(["ctest", "--show-only=json-v1"], cwd=os.environ["SQUALL_BUILD_DIR"], check=True,
                        capture_output=True, text=True).stdout
costs = {t["name"]: next((p["value"] for p in t.get("properties", []) if p["name"] == "COST"), None)
         for t in json.loads(listed)["tests"]}
for line in before.splitlines():
    if not line.strip() or line.startswith("#"):
        continue
    name, release = line.split()[:2]
    if name not in costs:
        failures.append(f"tests/test_costs.txt names {name}, which is not a test of this build")
    elif release != "-" and costs[name] != float(release):
        failures.append(f"{name}'s COST is {costs[name]}, not test_costs.txt's {release} (squall_test_costs() not called?)")
if open(table).read() != before:
    failures.append("--print changed tests/test_costs.txt")
for f in failures:
    print("FAILED:", f)
print(f"{len(longest)} rows" if not failures else "")
sys.exit(1 if failures else 0)
