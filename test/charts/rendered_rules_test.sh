#!/usr/bin/env bash
# The PrometheusRule the chart renders (metrics.prometheusRule.enabled) carries exactly the rules file the promtool
# tests read, and promtool accepts it as rendered. Needs helm (LIKEN_HELM, else the project's build cache); exit
# 77 (skipped) where there is none.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
helm=${LIKEN_HELM:-$HOME/.cache/liken-dra/shared/bin/helm}
[ -x "$helm" ] || { echo "SKIP: no helm at $helm"; exit 77; }
python3 -c "import yaml" 2>/dev/null || { echo "SKIP: python3 has no yaml module"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$helm" template liken "$REPO/charts/liken-dra" -n liken-system --set metrics.prometheusRule.enabled=true \
  --show-only templates/prometheusrule.yaml >"$work/rule.yaml"
"$helm" template liken "$REPO/charts/liken-dra" -n liken-system >"$work/default.yaml"
grep -q "kind: PrometheusRule" "$work/default.yaml" && { echo "FAIL: a PrometheusRule is rendered by default"; exit 1; }
python3 - "$work/rule.yaml" "$REPO/charts/liken-dra/files/prometheus-rules.yaml" "$work/groups.yaml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
rules = yaml.safe_load(open(sys.argv[2]))
if doc.get("kind") != "PrometheusRule" or doc.get("spec") != rules:
    sys.exit("FAIL: the rendered PrometheusRule's spec is not the rules file")
yaml.safe_dump({"groups": doc["spec"]["groups"]}, open(sys.argv[3], "w"))
print(f"ok: the rendered PrometheusRule carries the rules file ({len(rules['groups'][0]['rules'])} rules)")
PY
promtool check rules "$work/groups.yaml"
