// The DRAResourceHealth gRPC services (v1 and v1alpha1): a stream of the full device health list.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "kubelet/claim_preparer.h"
#include "kubelet/device_catalog.h"

namespace liken::kubelet {

// How the health stream behaves.
struct HealthStreamOptions {
  std::string pool;                                 // the node name
  absl::Duration resend_interval = absl::Seconds(20);  // the list is sent again at least this often
  absl::Duration timeout = absl::Seconds(60);          // health_check_timeout_seconds sent to the kubelet
};

// v1.DRAResourceHealth: sends the list at once, whenever the catalog changes, and every resend interval;
// ends when the kubelet cancels or the catalog is closed. `catalog` and `preparer` are borrowed.
// Thread-safe.
std::unique_ptr<grpc::Service> NewHealthV1Service(HealthStreamOptions options, DeviceCatalog* catalog,
                                                  const ClaimPreparer* preparer);

// The same for v1alpha1.DRAResourceHealth (older kubelets). Thread-safe.
std::unique_ptr<grpc::Service> NewHealthV1alpha1Service(HealthStreamOptions options, DeviceCatalog* catalog,
                                                        const ClaimPreparer* preparer);

}  // namespace liken::kubelet
