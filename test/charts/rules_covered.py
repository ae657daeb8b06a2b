#!/usr/bin/env python3
"""Every alert in the chart's rules file is tested both ways in the promtool test file: at least once firing
(a non-empty exp_alerts) and at least once silent (exp_alerts: []); and the chart's template includes that file.

usage: rules_covered.py RULES_YAML TEST_YAML TEMPLATE_YAML
"""
import re
import sys


def main():
    rules_path, test_path, template_path = sys.argv[1:4]
    rules = re.findall(r"^\s*- alert:\s*(\S+)\s*$", open(rules_path).read(), re.M)
    firing, silent = set(), set()
    # Each alert_rule_test entry: "alertname: X" followed by "exp_alerts: []" or by a list.
    for name, rest in re.findall(r"alertname:\s*(\S+)\s*\n\s*exp_alerts:(.*)", open(test_path).read()):
        (silent if rest.strip() == "[]" else firing).add(name)
    failures = []
    if not rules:
        failures.append(f"no alerts found in {rules_path}")
    for name in rules:
        if name not in firing:
            failures.append(f"{name}: never tested firing")
        if name not in silent:
            failures.append(f"{name}: never tested silent")
    for name in sorted((firing | silent) - set(rules)):
        failures.append(f"{name}: tested but not in the rules file")
    if '.Files.Get "files/prometheus-rules.yaml"' not in open(template_path).read():
        failures.append(f"{template_path} does not include files/prometheus-rules.yaml")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(rules)} alerts, {len(firing)} tested firing, {len(silent)} tested silent; {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
