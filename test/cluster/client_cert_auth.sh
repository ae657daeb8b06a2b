#!/usr/bin/env bash
# The driver's REST client with client-certificate authentication (inline EC key and certificate in a
# kubeconfig, CA verification): it publishes the node's slice on the real API server.
set -euo pipefail
export LIKEN_CLUSTER_DIR=${LIKEN_CLUSTER_DIR:-/tmp/liken-cluster}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DRA=${LIKEN_DRA:-$REPO/build/liken-dra}
WORK=$(mktemp -d /dev/shm/liken-cc.XXXXXX)
trap 'kill -- -$(cat "$WORK/pid" 2>/dev/null) 2>/dev/null || true; "$REPO/hack/local-cluster.sh" down >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
eval "$("$REPO/hack/local-cluster.sh" up)"
grep -q client-certificate-data "$KUBECONFIG" || { echo "FAIL the admin kubeconfig has no client certificate"; exit 1; }
mkdir -p "$WORK/kubelet" "$WORK/cdi"
TMPDIR=/dev/shm setsid umockdev-run -d "$REPO/test/machines/laptop.umockdev" -- "$DRA" run --node-name node-a \
  --kubeconfig "$KUBECONFIG" --kubelet-root "$WORK/kubelet" --cdi-root "$WORK/cdi" --metrics-address "" \
  >"$WORK/driver.log" 2>&1 </dev/null &
echo $! >"$WORK/pid"
for _ in $(seq 1 200); do
  if "$LIKEN_K8S_BIN/kubectl" get resourceslice node-a-liken.sh >/dev/null 2>&1; then
    echo "ok   the driver authenticated with a client certificate and published its slice"
    exit 0
  fi
  sleep 0.3
done
echo "FAIL no slice with client-certificate authentication"; tail -n 20 "$WORK/driver.log"
exit 1
