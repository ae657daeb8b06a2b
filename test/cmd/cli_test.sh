#!/usr/bin/env bash
# The command-line contract: exit codes, one-line errors, output formats.
set -u
bin="$1"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$bin" scan --node-name n --sysfs-root "$tmp/missing" >"$tmp/out" 2>"$tmp/err"; rc=$?
check "scan exits non-zero when sysfs is unreadable" '[ $rc -ne 0 ]'
check "with a one-line error" '[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q "cannot read sysfs" "$tmp/err"'
check "and nothing on stdout" '[ ! -s "$tmp/out" ]'

"$bin" report --sysfs-root "$tmp/missing" >/dev/null 2>"$tmp/err"; rc=$?
check "report exits non-zero when sysfs is unreadable" '[ $rc -ne 0 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ]'

mkdir -p "$tmp/sys/devices"
"$bin" scan --node-name node-x --sysfs-root "$tmp/sys" -o json >"$tmp/out" 2>"$tmp/err"; rc=$?
check "scan of an empty machine succeeds" '[ $rc -eq 0 ]'
check "and prints a List with the pool slice" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"kind\"]==\"List\" and d[\"items\"][0][\"metadata\"][\"name\"]==\"node-x-liken.sh\"" "$tmp/out"'
"$bin" scan --node-name node-x --sysfs-root "$tmp/sys" >"$tmp/out.yaml"; rc=$?
check "default output is YAML" '[ $rc -eq 0 ] && head -1 "$tmp/out.yaml" | grep -q "^apiVersion: v1"'
"$bin" report --sysfs-root "$tmp/sys" -o json >"$tmp/r.json"; rc=$?
check "report -o json has the three sections" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert set([\"published\",\"withheld\",\"unclaimed\"]) <= set(d)" "$tmp/r.json"'
"$bin" scan >/dev/null 2>&1; rc=$?
check "scan without --node-name is a usage error" '[ $rc -eq 2 ]'
"$bin" scan --node-name n --storage-roles=maybe --sysfs-root "$tmp/sys" >/dev/null 2>&1; rc=$?
check "a bad --storage-roles is a usage error" '[ $rc -eq 2 ]'
"$bin" scan --node-name node-x --sysfs-root "$tmp/sys" -v >/dev/null 2>&1; rc=$?
check "-v alone is accepted" '[ $rc -eq 0 ]'
"$bin" scan --node-name node-x --sysfs-root "$tmp/sys" --v=0 >/dev/null 2>&1; rc=$?
check "--v=0 is accepted" '[ $rc -eq 0 ]'
# SIGTERM is honoured while the API server is unreachable (before the first slice list succeeds).
mkdir -p "$tmp/k" "$tmp/cdi"
cat >"$tmp/kubeconfig" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
KC
"$bin" run --node-name n --kubeconfig "$tmp/kubeconfig" --kubelet-root "$tmp/k" --cdi-root "$tmp/cdi" \
  --metrics-address "" --sysfs-root "$tmp/sys" --no-uevents >"$tmp/run.log" 2>&1 &
pid=$!
sleep 2
kill -TERM $pid
for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
if kill -0 $pid 2>/dev/null; then
  kill -KILL $pid; rc=137
else
  wait $pid; rc=$?
fi
check "run stops on SIGTERM within 20 s while the API server is unreachable" '[ $rc -eq 0 ]'
check "and removes its sockets" '[ -z "$(find "$tmp/k" -name "*.sock")" ]'

"$bin" scan --node-name "Not_A_Node" --sysfs-root "$tmp/sys" >/dev/null 2>"$tmp/err"; rc=$?
check "an invalid node name is a usage error" '[ $rc -eq 2 ] && grep -q "node name" "$tmp/err"'
"$bin" scan --node-name "$(printf 'a%.0s' $(seq 1 250))" --sysfs-root "$tmp/sys" >/dev/null 2>&1; rc=$?
check "a node name too long for its slice names is a usage error" '[ $rc -eq 2 ]'
# Bytes that are not UTF-8 in sysfs never crash the JSON output.
mkdir -p "$tmp/bad/sys/devices/pci0000:00/0000:00:05.0" "$tmp/bad/sys/bus/pci/devices"
printf 'SUBSYSTEM=pci\n' >"$tmp/bad/sys/devices/pci0000:00/0000:00:05.0/uevent"
printf 'pci:v\377\376\n' >"$tmp/bad/sys/devices/pci0000:00/0000:00:05.0/modalias"
printf '0x0c0330\n' >"$tmp/bad/sys/devices/pci0000:00/0000:00:05.0/class"
ln -s ../../../devices/pci0000:00/0000:00:05.0 "$tmp/bad/sys/bus/pci/devices/0000:00:05.0"
"$bin" report -o json --sysfs-root "$tmp/bad/sys" >"$tmp/bad.json" 2>/dev/null; rc=$?
check "report -o json survives a modalias that is not UTF-8" '[ $rc -eq 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"unclaimed\"][0][\"modalias\"] == \"\"" "$tmp/bad.json"'

"$bin" frobnicate >/dev/null 2>&1; rc=$?
check "an unknown command is a usage error" '[ $rc -eq 2 ]'
exit $fail
