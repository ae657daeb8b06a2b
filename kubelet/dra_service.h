// The DRAPlugin gRPC services (v1 and v1beta1), both thin translations onto one ClaimPreparer.
#pragma once

#include <memory>

#include <grpcpp/grpcpp.h>

#include "kubelet/claim_preparer.h"

namespace liken::kubelet {

// k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin over `preparer` (borrowed, must outlive the service).
// A malformed request (see ValidateClaimRefs) gets INVALID_ARGUMENT; claim failures go in each claim's
// error field. Thread-safe.
std::unique_ptr<grpc::Service> NewDraV1Service(ClaimPreparer* preparer);

// The same for k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin (no share_id). Thread-safe.
std::unique_ptr<grpc::Service> NewDraV1beta1Service(ClaimPreparer* preparer);

}  // namespace liken::kubelet
