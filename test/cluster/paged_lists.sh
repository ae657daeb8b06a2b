#!/usr/bin/env bash
# The informers' paged lists against the real API server: 501 pods bound to node-a (more than one page of 500)
# are listed by the driver in two pages (limit and continue), and it caches all of them.
set -euo pipefail
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DRA=${LIKEN_DRA:-$REPO/build/liken-dra}
WORK=$(mktemp -d /dev/shm/liken-paged.XXXXXX)
trap 'kill -- -$(cat "$WORK/pid" 2>/dev/null) 2>/dev/null || true; "$REPO/hack/local-cluster.sh" down >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
eval "$("$REPO/hack/local-cluster.sh" up)"
k() { "$LIKEN_K8S_BIN/kubectl" "$@"; }
PODS=501
k create namespace liken-paged >/dev/null
for _ in $(seq 1 100); do k -n liken-paged get serviceaccount default >/dev/null 2>&1 && break; sleep 0.2; done
# Pods bound to node-a (there is no kubelet: they never run), created in one request list.
{
  echo '{"apiVersion":"v1","kind":"List","items":['
  for i in $(seq 1 $PODS); do
    [ "$i" -gt 1 ] && echo ','
    echo "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p$i\",\"namespace\":\"liken-paged\"},"
    echo "\"spec\":{\"nodeName\":\"node-a\",\"automountServiceAccountToken\":false,\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/none\"}]}}"
  done
  echo ']}'
} >"$WORK/pods.json"
k apply -f "$WORK/pods.json" >/dev/null
[ "$(k -n liken-paged get pods --no-headers | wc -l)" -eq $PODS ] || { echo "FAIL created $PODS pods"; exit 1; }
mkdir -p "$WORK/kubelet" "$WORK/cdi" "$WORK/sys/devices" "$WORK/dev"
setsid "$DRA" run --node-name node-a --kubeconfig "$KUBECONFIG" --kubelet-root "$WORK/kubelet" --cdi-root "$WORK/cdi" \
  --sysfs-root "$WORK/sys" --dev-root "$WORK/dev" --metrics-address "" --no-uevents --v=1 \
  >"$WORK/driver.log" 2>&1 </dev/null &
echo $! >"$WORK/pid"
for _ in $(seq 1 200); do
  if grep -q 'msg="informer: listed in pages" resource=pods' "$WORK/driver.log"; then
    line=$(grep 'msg="informer: listed in pages" resource=pods' "$WORK/driver.log" | head -n 1)
    if echo "$line" | grep -q "pages=2 objects=$PODS"; then
      echo "ok   the driver listed $PODS pods in 2 pages (limit 500, continue) from the real API server"
      exit 0
    fi
    echo "FAIL unexpected paging: $line"
    exit 1
  fi
  sleep 0.3
done
echo "FAIL the pods were never listed in pages"; tail -n 20 "$WORK/driver.log"
exit 1
