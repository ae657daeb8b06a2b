#!/usr/bin/env python3
"""The chart's Grafana dashboard (charts/liken-dra/files/grafana-dashboard.json): every panel has a query, and every
query names only series that exist: the metrics the driver registers (read from its source: the "liken_..." names
of controller/*metrics*.cc, where every series is registered; a histogram's _bucket, _sum and _count), the alerts' ALERTS series, or the
series the chart's alert rules already read (kube-state-metrics, up). With promtool, every query also parses
(as a recording rule in `promtool check rules`).

Usage: dashboard_queries.py SOURCE_ROOT, or --self-test (a made-up dashboard naming a metric the driver does not
export, and one with a query that does not parse, must both fail)."""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

FUNCTIONS = {"sum", "count", "avg", "min", "max", "rate", "irate", "increase", "histogram_quantile", "vector",
             "absent", "clamp_min", "clamp_max", "topk", "bottomk", "delta", "deriv", "time", "label_replace"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "or", "and", "unless", "bool", "offset"}
OTHER_SERIES = {"ALERTS", "ALERTS_FOR_STATE", "up"}


def driver_metrics(root):
    """Metric names the driver registers, and which are histograms."""
    names, histograms = set(), set()
    for path in (root / "controller").glob("*metrics*.cc"):
        text = path.read_text()
        names.update(re.findall(r'"(liken_[a-z0-9_]+)"', text))
        histograms.update(re.findall(r'BuildHistogram\(\)\s*\.Name\(\s*"(liken_[a-z0-9_]+)"', text))
    return names, histograms


def rule_series(root):
    """Series the chart's alert rules read that are not the driver's (kube_daemonset_..., up)."""
    path = root / "charts/liken-dra/files/prometheus-rules.yaml"
    return set(re.findall(r"\b(kube_[a-z0-9_]+)\b", path.read_text())) if path.exists() else set()


def series_names(expr):
    """The identifiers of `expr` that name series: no label matchers, label lists, strings, ranges or functions."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", text)
    names = []
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        word = match.group(0)
        rest = text[match.end():].lstrip()
        if word in KEYWORDS or rest[:1] == "(" or re.match(r"(by|without)\b", rest):
            continue
        names.append(word)
    return names


def functions_used(expr):
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    return {m.group(1) for m in re.finditer(r"\b([a-z_]+)\s*\(", text) if m.group(1) not in KEYWORDS}


def check(dashboard, root):
    problems = []
    known, histograms = driver_metrics(root)
    if not known:
        return [f"no liken_ metric names found in {root}/controller/*metrics*.cc"]
    allowed = set(known) | OTHER_SERIES | rule_series(root)
    for h in histograms:
        allowed |= {h + "_bucket", h + "_sum", h + "_count"}
    exprs = []
    for panel in dashboard.get("panels", []):
        title = panel.get("title", f"panel {panel.get('id')}")
        targets = [t for t in panel.get("targets", []) if t.get("expr")]
        if not targets:
            problems.append(f"{title}: no query")
        for t in targets:
            exprs.append((title, t["expr"]))
            for name in series_names(t["expr"]):
                if name not in allowed:
                    problems.append(f"{title}: '{name}' is no metric the driver exports nor a series the rules read")
            for f in functions_used(t["expr"]) - FUNCTIONS:
                problems.append(f"{title}: unknown function '{f}'")
    if not exprs:
        problems.append("the dashboard has no queries")
    promtool = shutil.which("promtool")
    if promtool and exprs:
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as rules:
            json.dump({"groups": [{"name": "dashboard", "rules": [
                {"record": f"dashboard:query_{i}", "expr": e} for i, (_, e) in enumerate(exprs)]}]}, rules)
            rules.flush()
            run = subprocess.run([promtool, "check", "rules", rules.name], capture_output=True, text=True)
            if run.returncode != 0:
                problems.append("promtool check rules refused a query: " + (run.stdout + run.stderr).strip())
    return problems


def self_test(root):
    bad_name = {"panels": [{"title": "typo", "targets": [{"expr": "sum(liken_published_device)"}]}]}
    bad_syntax = {"panels": [{"title": "syntax", "targets": [{"expr": "sum(liken_published_devices"}]}]}
    good = {"panels": [{"title": "ok", "targets": [
        {"expr": 'histogram_quantile(0.9, sum by (le) (rate(liken_prepare_duration_seconds_bucket{x="a b"}[5m])))'}]}]}
    ok = True
    for name, dash, want_fail in (("a misspelt metric", bad_name, True), ("a good query", good, False)) + (
            (("a query that does not parse", bad_syntax, True),) if shutil.which("promtool") else ()):
        problems = check(dash, root)
        if bool(problems) != want_fail:
            print(f"FAIL: self-test, {name}: {problems}")
            ok = False
        else:
            print(f"ok: self-test, {name}: {problems[0] if problems else 'accepted'}")
    return 0 if ok else 1


def main():
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        return self_test(pathlib.Path(args[1] if len(args) > 1 else pathlib.Path(__file__).resolve().parents[2]))
    root = pathlib.Path(args[0])
    dashboard = json.loads((root / "charts/liken-dra/files/grafana-dashboard.json").read_text())
    problems = check(dashboard, root)
    for p in problems:
        print("FAIL:", p)
    queries = sum(len(p.get("targets", [])) for p in dashboard["panels"])
    print(f"{len(dashboard['panels'])} panels, {queries} queries, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
