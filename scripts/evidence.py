#!/usr/bin/env python3
"""Collects the `evidence:` lines that tests print (where a fault landed, what was in flight)
from nextest's JUnit report into one file, passing tests included (nextest shows a passing
test's output nowhere else), and fails when a passing test of a fault module printed none:
a fault that stopped landing must not go unseen.

usage: evidence.py JUNIT_XML OUT_TXT PREFIX...

A PREFIX is a test module (`exits`) or the start of test names in one (`faults::issue_41_`).
"""
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    junit, out, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"evidence: cannot read {junit}: {e}")
        return 1
    lines, silent, tests = [], [], 0
    for case in root.iter("testcase"):
        name = case.get("name", "")
        failed = case.find("failure") is not None or case.find("error") is not None
        text = "\n".join(
            (e.text or "") for tag in ("system-out", "system-err") for e in case.iter(tag)
        )
        found = [l.strip() for l in text.splitlines() if "evidence:" in l]
        if found:
            tests += 1
            lines += [f"{name}: {l[l.index('evidence:'):]}" for l in found]
        elif not failed and any(
            name.startswith(m if "::" in m else m + "::") for m in modules
        ):
            silent.append(name)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"evidence: {len(lines)} lines from {tests} tests in {out}")
    for name in silent:
        print(f"evidence: {name} passed without an evidence line: did its fault land?")
    return 1 if silent else 0


if __name__ == "__main__":
    sys.exit(main())
