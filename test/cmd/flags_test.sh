#!/usr/bin/env bash
# Flag values that make no sense are usage errors (exit 2) with a one-line message naming the flag.
set -u
bin="$1"
fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sys/devices" "$tmp/k" "$tmp/cdi"

# expect_usage_error NAME FLAG_IN_MESSAGE WORDS_IN_MESSAGE COMMAND...
expect_usage_error() {
  local name="$1" flag="$2" words="$3"
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$flag" "$tmp/err" && grep -q -- "$words" "$tmp/err"; then
    echo "ok: $name"
  else
    echo "FAIL: $name (exit $rc): $(cat "$tmp/err")"
    fail=1
  fi
}

run=("$bin" run --node-name n --kubelet-root "$tmp/k" --cdi-root "$tmp/cdi" --metrics-address "" \
     --sysfs-root "$tmp/sys" --no-uevents --kubeconfig "$tmp/none")
expect_usage_error "a negative --kube-api-burst" --kube-api-burst "integer from 1 to" "${run[@]}" --kube-api-burst -5
expect_usage_error "a zero --kube-api-burst" --kube-api-burst "integer from 1 to" "${run[@]}" --kube-api-burst 0
expect_usage_error "a --kube-api-burst that is no integer" --kube-api-burst "integer" "${run[@]}" --kube-api-burst 1.5
expect_usage_error "a negative --kube-api-qps" --kube-api-qps "number from" "${run[@]}" --kube-api-qps -1
expect_usage_error "a zero --kube-api-qps" --kube-api-qps "above 0" "${run[@]}" --kube-api-qps 0
expect_usage_error "a --kube-api-qps that is not finite" --kube-api-qps "number" "${run[@]}" --kube-api-qps inf
expect_usage_error "a --resync-period of 0" --resync-period "duration from" "${run[@]}" --resync-period 0s
expect_usage_error "a negative --resync-period" --resync-period "duration from" "${run[@]}" --resync-period -5s
expect_usage_error "a --resync-period of a year" --resync-period "duration from" "${run[@]}" --resync-period 8760h
expect_usage_error "a --metrics-address port out of range" --metrics-address "port from 0 to 65535" \
  "${run[@]}" --metrics-address :70000
expect_usage_error "a --metrics-address without a port" --metrics-address "port" "${run[@]}" --metrics-address localhost
expect_usage_error "a relative --kubelet-root" --kubelet-root "absolute path" "${run[@]}" --kubelet-root var/lib/kubelet
expect_usage_error "a relative --cdi-root" --cdi-root "absolute path" "${run[@]}" --cdi-root run/cdi
expect_usage_error "a relative --sysfs-root for run" --sysfs-root "absolute path" "${run[@]}" --sysfs-root sys
expect_usage_error "--v out of range" --v "integer from 0 to 10" "$bin" scan --node-name n --sysfs-root "$tmp/sys" --v=99
expect_usage_error "--v that is no number" --v "integer" "$bin" report --sysfs-root "$tmp/sys" --v=loud

# A relative root found nothing and exited 0; now it says why and fails.
(cd "$tmp" && expect_usage_error "a relative --sysfs-root for scan" --sysfs-root "absolute path" \
  "$bin" scan --node-name n --sysfs-root sys)
expect_usage_error "a relative --sysfs-root for report" --sysfs-root "absolute path" "$bin" report --sysfs-root sys
expect_usage_error "a relative --dev-root" --dev-root "absolute path" "$bin" report --sysfs-root "$tmp/sys" --dev-root dev
expect_usage_error "a relative --proc-root" --proc-root "absolute path" "$bin" report --sysfs-root "$tmp/sys" --proc-root p
expect_usage_error "a relative --modules-root" --modules-root "absolute path" \
  "$bin" report --sysfs-root "$tmp/sys" --modules-root lib/modules

# Sensible values still pass the checks (scan reaches its output).
"$bin" scan --node-name n --sysfs-root "$tmp/sys" --v=2 >/dev/null 2>&1; rc=$?
if [ $rc -eq 0 ]; then echo "ok: --v=2 is accepted"; else echo "FAIL: --v=2 (exit $rc)"; fail=1; fi
exit $fail
