#!/usr/bin/env python3
"""Every alert in the chart's rules file is tested both ways in the promtool test file, and the chart's template
includes that file:

- firing: at least one alert_rule_test entry with a non-empty exp_alerts;
- silent: at least one entry with an empty exp_alerts whose eval_time is at least the rule's `for:`. An empty list
  taken earlier proves nothing: no alert can fire before its `for:` has elapsed, whatever the input (the series
  start at time 0), so such an entry is reported and not counted.

usage: rules_covered.py RULES_YAML TEST_YAML TEMPLATE_YAML
       rules_covered.py --self-test   (shows the check fails where it should)
"""
import os
import re
import sys
import tempfile

import yaml

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def seconds(duration):
    """A Prometheus duration ("90s", "1h30m", "0m") in seconds; ValueError for anything else."""
    text = str(duration).strip()
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a Prometheus duration: {duration!r}")
    return sum(int(n) * _UNITS[u] for n, u in parts)


def check(rules_path, test_path, template_path):
    """The failures found, as lines of text, and a one-line summary."""
    failures = []
    rules = {}
    for group in (yaml.safe_load(open(rules_path)) or {}).get("groups") or []:
        for rule in group.get("rules") or []:
            if "alert" in rule:
                rules[rule["alert"]] = seconds(rule.get("for", "0s"))
    if not rules:
        failures.append(f"no alerts found in {rules_path}")
    firing, silent = set(), set()
    tests = (yaml.safe_load(open(test_path)) or {}).get("tests") or []
    for t, test in enumerate(tests):
        for case in test.get("alert_rule_test") or []:
            name = case.get("alertname")
            if case.get("exp_alerts"):
                firing.add(name)
                continue
            at = seconds(case.get("eval_time", "0s"))
            if name in rules and at < rules[name]:
                failures.append(f"{name}: the silent case at eval_time {case.get('eval_time')} (test {t + 1}) comes "
                                f"before its for: ({rules[name]:g} s) could elapse, so it cannot fail: not counted")
                continue
            silent.add(name)
    for name in rules:
        if name not in firing:
            failures.append(f"{name}: never tested firing")
        if name not in silent:
            failures.append(f"{name}: never tested silent after its for:")
    for name in sorted((firing | silent) - set(rules)):
        failures.append(f"{name}: tested but not in the rules file")
    if '.Files.Get "files/prometheus-rules.yaml"' not in open(template_path).read():
        failures.append(f"{template_path} does not include files/prometheus-rules.yaml")
    summary = (f"{len(rules)} alerts, {len(firing)} tested firing, {len(silent)} tested silent after their for:; "
               f"{len(failures)} failure(s)")
    return failures, summary


_SELF_TEST_RULES = """groups:
  - name: g
    rules:
      - alert: Slow
        expr: x > 0
        for: 5m
"""
_SELF_TEST_CASES = {
    # The silent case comes at 4m, before the 5m `for:`: it cannot fail, so the alert counts as never tested silent.
    "early silent case": ("tests:\n  - input_series: []\n    alert_rule_test:\n"
                          "      - {eval_time: 4m, alertname: Slow, exp_alerts: []}\n"
                          "      - {eval_time: 6m, alertname: Slow, exp_alerts: [{exp_labels: {}}]}\n", False),
    "no firing case": ("tests:\n  - input_series: []\n    alert_rule_test:\n"
                       "      - {eval_time: 6m, alertname: Slow, exp_alerts: []}\n", False),
    "both cases": ("tests:\n  - input_series: []\n    alert_rule_test:\n"
                   "      - {eval_time: 5m, alertname: Slow, exp_alerts: []}\n"
                   "      - {eval_time: 6m, alertname: Slow, exp_alerts: [{exp_labels: {}}]}\n", True),
}


def self_test():
    """Each made-up test file is judged as it should be; 0 when all are."""
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: os.path.join(tmp, n) for n in ("rules.yaml", "tests.yaml", "template.yaml")}
        open(paths["rules.yaml"], "w").write(_SELF_TEST_RULES)
        open(paths["template.yaml"], "w").write('{{ .Files.Get "files/prometheus-rules.yaml" }}\n')
        for name, (text, want_ok) in _SELF_TEST_CASES.items():
            open(paths["tests.yaml"], "w").write(text)
            failures, _ = check(paths["rules.yaml"], paths["tests.yaml"], paths["template.yaml"])
            ok = not failures
            print(f"{'ok' if ok == want_ok else 'WRONG'}: {name}: {'passes' if ok else 'fails'} "
                  f"({'; '.join(failures) or 'no failure'})")
            bad += ok != want_ok
    for text, want in (("90s", 90), ("1h30m", 5400), ("0m", 0)):
        if seconds(text) != want:
            print(f"WRONG: seconds({text!r}) = {seconds(text)}, want {want}")
            bad += 1
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    failures, summary = check(*sys.argv[1:4])
    for f in failures:
        print("FAIL:", f)
    print(summary)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
