#!/usr/bin/env bash
# The main job on a fresh machine: install what is needed, build, and run liken-dra on this node.
# With KUBECONFIG (or in a pod) and NODE_NAME set, it runs the node daemon; otherwise it prints the
# hardware report and the ResourceSlices this node would publish.
set -euo pipefail
cd "$(dirname "$0")/.."
./hack/install-deps.sh
./hack/build.sh liken-dra
node="${NODE_NAME:-$(hostname)}"
if [ -n "${KUBECONFIG:-}" ] || [ -n "${KUBERNETES_SERVICE_HOST:-}" ]; then
  exec ./build/liken-dra run --node-name "$node" ${KUBECONFIG:+--kubeconfig "$KUBECONFIG"} "$@"
fi
./build/liken-dra report "$@"
echo
./build/liken-dra scan --node-name "$node"
