#!/usr/bin/env bash
# Each flag is declared once (cmd/flags.cc): the help text shows its default and environment variable, every
# command that shares a flag shows the same default, and the spellings users type all reach the same flag.
set -u
bin="$1"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sys/devices"

"$bin" run --help >"$tmp/run" 2>&1; rc=$?
"$bin" healthcheck --help >"$tmp/health" 2>&1
"$bin" scan -h >"$tmp/scan" 2>&1
"$bin" report --help >"$tmp/report" 2>&1
check "run --help exits 0" '[ $rc -eq 0 ]'
check "run --help names the kubelet root's default" 'grep -q -- "--kubelet-root DIR .*(default /var/lib/kubelet)" "$tmp/run"'
check "healthcheck shows the same default" 'grep -q -- "--kubelet-root DIR .*(default /var/lib/kubelet)" "$tmp/health"'
check "environment variables are named" 'grep -q -- "--node-name NAME .*\[env NODE_NAME\]" "$tmp/run" && grep -q -- "--pod-uid UID .*\[env POD_UID\]" "$tmp/health"'
check "scan's -o defaults to yaml, report's to text" 'grep -q -- "-o, --output yaml|json .*(default yaml)" "$tmp/scan" && grep -q -- "-o, --output text|json .*(default text)" "$tmp/report"'
check "discovery flags are listed for scan" 'grep -q -- "--storage-roles withhold|host .*(default withhold)" "$tmp/scan"'
check "healthcheck lists no discovery flags" '! grep -q -- "--sysfs-root" "$tmp/health"'

for form in "-o json" "-o=json" "--output json" "--output=json" "--o json"; do
  # shellcheck disable=SC2086
  "$bin" scan --node-name n --sysfs-root "$tmp/sys" $form >"$tmp/out" 2>/dev/null; rc=$?
  check "scan $form prints JSON" '[ $rc -eq 0 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/out"'
done
"$bin" scan --node-name n --kernel-release= --sysfs-root "$tmp/sys" -o json >"$tmp/out" 2>/dev/null; rc=$?
check "--name= is an empty value, not the next argument" '[ $rc -eq 0 ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/out"'
NODE_NAME=from-env "$bin" scan --sysfs-root="$tmp/sys" -o json >"$tmp/out" 2>/dev/null; rc=$?
check "NODE_NAME stands in for --node-name" '[ $rc -eq 0 ] && grep -q "from-env-liken.sh" "$tmp/out"'
NODE_NAME=from-env "$bin" scan --node-name flag --sysfs-root "$tmp/sys" -o json >"$tmp/out" 2>/dev/null
check "the flag wins over the environment" 'grep -q "flag-liken.sh" "$tmp/out"'
"$bin" scan --node-name n --sysfs-root "$tmp/sys" -o xml >/dev/null 2>"$tmp/err"; rc=$?
check "a value outside a flag's set is a usage error naming it" '[ $rc -eq 2 ] && grep -q -- "-o must be" "$tmp/err"'
"$bin" healthcheck --sysfs-root /sys >/dev/null 2>"$tmp/err"; rc=$?
check "a flag of another command is unknown" '[ $rc -eq 2 ] && grep -q "unknown flag" "$tmp/err"'
exit $fail
