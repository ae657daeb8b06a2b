// What kubectl-liken reads from the API server, in one pass of lists: liken's ResourceSlices, the claims, pods,
// device classes and nodes. Reads only (get and list).
#pragma once

#include <cstddef>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "apis/resource_claim.h"
#include "apis/resource_slice.h"
#include "informers/kube_client.h"

namespace liken::clusterview {

// The driver whose devices the view shows.
inline constexpr char kLikenDriver[] = "liken.sh";

// The most objects one list may return over all its pages; more is an error, not a silently cut view.
inline constexpr size_t kMaxListItems = 100000;

// The objects one command reads. Plain data; not thread-safe to mutate concurrently.
struct ClusterSnapshot {
  std::vector<apis::ResourceSlice> slices;    // spec.driver == liken.sh only
  std::vector<apis::ResourceClaim> claims;    // of the scope's namespace, or all
  std::vector<nlohmann::json> pods;           // of the scope's namespace, or all; when SnapshotScope::pods
  std::vector<nlohmann::json> device_classes; // when SnapshotScope::device_classes
  std::vector<nlohmann::json> nodes;          // when SnapshotScope::nodes and readable
  std::optional<std::string> nodes_unreadable;  // why the nodes could not be listed (a read-only role may lack it)
};

// Which objects to read.
struct SnapshotScope {
  std::string namespace_name;   // empty: every namespace
  bool pods = true;             // false: no pods read (devices need only the claims' reservedFor)
  bool device_classes = false;
  bool nodes = false;
};

// OK when the cluster serves resource.k8s.io/v1; FailedPrecondition with a message for the user when it does not
// (404 on the group version); any other error as the client returned it, with what was read. Thread-safe.
absl::Status CheckResourceApiServed(informers::KubeClient& client);

// Lists every page of `path` (limit 500 per page, following `continue`), at most kMaxListItems items
// (ResourceExhausted beyond). Errors name the path. Thread-safe.
absl::StatusOr<std::vector<nlohmann::json>> ListAll(informers::KubeClient& client, const std::string& path,
                                                    const informers::RequestOptions& options, std::stop_token cancel);

// Reads the snapshot `scope` asks for, after CheckResourceApiServed. A slice or claim that does not parse is an
// InvalidArgument naming it. Thread-safe.
absl::StatusOr<ClusterSnapshot> FetchSnapshot(informers::KubeClient& client, const SnapshotScope& scope,
                                              std::stop_token cancel);

// The events of a pod (namespace `namespace_name`, name `pod`), oldest first by lastTimestamp. Thread-safe.
absl::StatusOr<std::vector<nlohmann::json>> FetchPodEvents(informers::KubeClient& client,
                                                           const std::string& namespace_name, const std::string& pod,
                                                           std::stop_token cancel);

}  // namespace liken::clusterview
