#!/usr/bin/env python3
"""Prints a draft golden (<name>.expected.json) for a recording from liken-dra's report, for a person to review
against the contract device by device (README.md here) before it is committed. A draft is not a test.

usage: draft_golden.py LIKEN_DRA RECORDING > corpus/<name>.expected.json
"""
import json
import subprocess
import sys


def main():
    binary, recording = sys.argv[1], sys.argv[2]
    out = subprocess.run(["umockdev-run", "-d", recording, "--", binary, "report", "-o", "json"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    report = json.loads(out)
    golden = {
        "published": [d["name"] for d in report["published"]],
        "withheld": sorted(w["name"] for w in report["withheld"]),
        "unclaimed": sorted(f"{u['bus']} {u['address']}" for u in report["unclaimed"]),
        "left_out": {l["name"]: {"driver": l["driver"], "reason": l["reason"]} for l in report["leftOut"]},
        "devices": {d["name"]: {"nodes": d["nodes"],
                                "attributes": {"liken.sh/subsystem": d["attributes"].get("liken.sh/subsystem")}}
                    for d in report["published"]},
    }
    json.dump(golden, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
