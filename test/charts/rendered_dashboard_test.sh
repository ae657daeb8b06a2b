#!/usr/bin/env bash
# The Grafana dashboard ConfigMap the chart renders: none by default; with grafana.dashboard.enabled the sidecar's
# label (default grafana_dashboard: "1", and the one set), the namespace set, and exactly the dashboard file as its
# data. Needs helm (LIKEN_HELM, else the project's build cache); exit 77 (skipped) where there is none.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
helm=${LIKEN_HELM:-$HOME/.cache/liken-dra/shared/bin/helm}
[ -x "$helm" ] || { echo "SKIP: no helm at $helm"; exit 77; }
python3 -c "import yaml" 2>/dev/null || { echo "SKIP: python3 has no yaml module"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
chart="$REPO/charts/liken-dra"
"$helm" template liken "$chart" -n liken-system >"$work/default.yaml"
grep -q "liken-dra-dashboard" "$work/default.yaml" && { echo "FAIL: a dashboard ConfigMap is rendered by default"; exit 1; }
echo "ok: no dashboard by default"
"$helm" template liken "$chart" -n liken-system --set grafana.dashboard.enabled=true \
  --show-only templates/grafana-dashboard.yaml >"$work/on.yaml"
"$helm" template liken "$chart" -n liken-system --set grafana.dashboard.enabled=true \
  --set grafana.dashboard.label=my_dashboards --set grafana.dashboard.labelValue=yes \
  --set grafana.dashboard.namespace=monitoring --show-only templates/grafana-dashboard.yaml >"$work/set.yaml"
if "$helm" template liken "$chart" --set grafana.dashboard.enabeld=true >/dev/null 2>&1; then
  echo "FAIL: a misspelt grafana.dashboard value was accepted"; exit 1
fi
echo "ok: a misspelt grafana.dashboard value is refused by the schema"
python3 - "$work/on.yaml" "$work/set.yaml" "$chart/files/grafana-dashboard.json" <<'PY'
import json, sys, yaml
on, changed = (yaml.safe_load(open(p)) for p in sys.argv[1:3])
dashboard = json.load(open(sys.argv[3]))
def want(name, got, expected):
    if got != expected:
        sys.exit(f"FAIL: {name}: got {got!r}, want {expected!r}")
    print(f"ok: {name}")
want("kind", on["kind"], "ConfigMap")
want("the sidecar's default label", on["metadata"]["labels"].get("grafana_dashboard"), "1")
want("the release namespace", on["metadata"]["namespace"], "liken-system")
want("the data is the dashboard file", json.loads(on["data"]["liken-dra.json"]), dashboard)
want("the label set", changed["metadata"]["labels"].get("my_dashboards"), "yes")
want("the namespace set", changed["metadata"]["namespace"], "monitoring")
PY
