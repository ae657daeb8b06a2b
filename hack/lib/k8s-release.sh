# shellcheck shell=bash
# What a Kubernetes release serves with the feature gates the local cluster gives it (hack/local-cluster.sh), so
# that one scenario checks the feature where it is served and the documented degraded behaviour where it is not.
# Source it; K8S_VERSION (default v1.37.2) names the release, LIKEN_FEATURE_GATES the gates passed on top of its
# defaults (unset: k8s_default_gates).
#
#   k8s_minor                 the release's minor version (34 for v1.34.4)
#   k8s_default_gates         the gates hack/local-cluster.sh passes when LIKEN_FEATURE_GATES is unset: none before
#                             1.36 (what an operator's cluster runs), DRAConsumableCapacity=true from 1.36 (on there)
#   k8s_serves FEATURE        exit 0 when served:
#     render-sharing            allowMultipleAllocations is kept (DRAConsumableCapacity; on by default from 1.36)
#     node-scoped-status        the associated-node verbs are checked (DRAResourceClaimGranularStatusAuthorization,
#                               from 1.36; absent before)
#     pod-health                device health in the pod's status (ResourceHealthStatus; on by default from 1.36)
#     device-taints             taints kept on a slice's devices (DRADeviceTaints; on by default from 1.36)
#     extended-resources        DeviceClass extendedResourceName and deviceclass.resource.kubernetes.io/ names in a
#                               pod's limits (DRAExtendedResource; on by default from 1.36)

LIKEN_DEFAULT_K8S_VERSION=v1.37.2

k8s_minor() {
  local v=${K8S_VERSION:-$LIKEN_DEFAULT_K8S_VERSION}
  v=${v#v}
  v=${v#*.}
  echo "${v%%.*}"
}

k8s_default_gates() {
  if [ "$(k8s_minor)" -ge 36 ]; then echo "DRAConsumableCapacity=true"; fi
}

# True when the gates in effect name GATE=true, or name nothing about it and the release turns it on.
k8s_gate_on() { # GATE DEFAULT_FROM_MINOR
  local gates=${LIKEN_FEATURE_GATES-$(k8s_default_gates)}
  case ",$gates," in
    *",$1=true,"*) return 0 ;;
    *",$1=false,"*) return 1 ;;
  esac
  [ "$(k8s_minor)" -ge "$2" ]
}

k8s_serves() {
  case "$1" in
    render-sharing) k8s_gate_on DRAConsumableCapacity 36 ;;
    node-scoped-status) [ "$(k8s_minor)" -ge 36 ] && k8s_gate_on DRAResourceClaimGranularStatusAuthorization 36 ;;
    pod-health) k8s_gate_on ResourceHealthStatus 36 ;;
    device-taints) k8s_gate_on DRADeviceTaints 36 ;;
    extended-resources) k8s_gate_on DRAExtendedResource 36 ;;
    *) echo "k8s_serves: unknown feature $1" >&2; return 2 ;;
  esac
}
